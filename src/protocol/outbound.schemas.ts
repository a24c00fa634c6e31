import { Type, type Static } from '@sinclair/typebox';
import { SessionClosedCodeSchema } from './code.schemas';
import { AgentIdSchema, MessageDataSchema, MessageIdSchema, TimeSchema } from './common.schemas';
import { Authors } from './names';
import type {
  AgentInboundMessage,
  AgentStatus,
  AuthExpiring,
  ClientInboundMessage,
  DebugTrace,
  SessionClosed,
  SessionInfo,
} from './payloads';
import type { Assert, Same } from './type-checks';

/**
 * Schemas of the payloads the hub sends (H→C, H→A). The hub builds these payloads itself, so they
 * are not checked at run time; they describe the wire for the AsyncAPI document and for tests
 * that check live traffic against it. The `Same` checks fail the build if one drifts from its type.
 */

/** H→A `message`. */
export const AgentInboundMessageSchema = Type.Object(
  {
    id: MessageIdSchema,
    ts: TimeSchema,
    agentId: AgentIdSchema,
    from: Type.String({ description: "The sender's verified clientId; 'admin' marks an admin." }),
    text: Type.String(),
    data: Type.Optional(MessageDataSchema),
  },
  { title: 'AgentInboundMessage' },
);

/** H→C `message`. */
export const ClientInboundMessageSchema = Type.Object(
  {
    id: MessageIdSchema,
    ts: TimeSchema,
    agentId: AgentIdSchema,
    author: Type.Union([Type.Literal(Authors.agent), Type.Literal(Authors.user)], {
      description: "'agent' for replies, REST publishes and broadcasts; 'user' for the user's own messages (other tabs, history).",
    }),
    text: Type.String(),
    data: Type.Optional(MessageDataSchema),
    replyTo: Type.Optional(Type.String({ description: 'The id of the message this one answers.' })),
    clientMessageId: Type.Optional(Type.String({ description: "On 'user' messages: the sender's clientMessageId." })),
  },
  { title: 'ClientInboundMessage' },
);

/** H→C `session`. */
export const SessionInfoSchema = Type.Object(
  {
    clientId: Type.String(),
    agentId: AgentIdSchema,
    agentOnline: Type.Boolean(),
    tokenExpiresAt: Type.Union([TimeSchema, Type.Null()], { description: 'When the token expires; null for a token without exp.' }),
    recovered: Type.Optional(
      Type.Boolean({
        description: 'Only when the handshake carried lastMessageId: true when every later message was replayed before this event.',
      }),
    ),
  },
  { title: 'SessionInfo' },
);

/** H→C `agent:status`. */
export const AgentStatusSchema = Type.Object({ agentId: AgentIdSchema, online: Type.Boolean() }, { title: 'AgentStatus' });

/** H→C `auth:expiring`. */
export const AuthExpiringSchema = Type.Object({ expiresAt: TimeSchema }, { title: 'AuthExpiring' });

/** H→C `debug` (admin sockets only). */
export const DebugTraceSchema = Type.Object(
  {
    agentId: AgentIdSchema,
    clientId: Type.Optional(Type.String({ description: 'The conversation the trace belongs to.' })),
    trace: Type.Unknown({ description: 'Any JSON value the runtime sent.' }),
    ts: TimeSchema,
  },
  { title: 'DebugTrace' },
);

/** H→C and H→A `session:closed`. */
export const SessionClosedSchema = Type.Object({ code: SessionClosedCodeSchema, retryable: Type.Boolean() }, { title: 'SessionClosed' });

export type OutboundSchemasMatchProtocol = [
  Assert<Same<Static<typeof AgentInboundMessageSchema>, AgentInboundMessage>>,
  Assert<Same<Static<typeof ClientInboundMessageSchema>, ClientInboundMessage>>,
  Assert<Same<Static<typeof SessionInfoSchema>, SessionInfo>>,
  Assert<Same<Static<typeof AgentStatusSchema>, AgentStatus>>,
  Assert<Same<Static<typeof AuthExpiringSchema>, AuthExpiring>>,
  Assert<Same<Static<typeof DebugTraceSchema>, DebugTrace>>,
  Assert<Same<Static<typeof SessionClosedSchema>, SessionClosed>>,
];
