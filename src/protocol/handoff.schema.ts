import { Type, type Static } from '@sinclair/typebox';
import { AgentIdSchema, TimeSchema } from './common.schema';
import { ControlStateSchema, OperatorNameSchema } from './control.schema';
import { Events, HANDOFF_REASON_MAX, HANDOFF_SUMMARY_MAX } from './names';
import { ClientInboundMessageSchema, MessageStartSchema } from './outbound.schema';
import type {
  ClientConversationControl,
  ConversationControl,
  HandoffRequest,
  OperatorAuth,
  OperatorFeedMessage,
  OperatorApprovalRequest,
  OperatorSession,
  WatchAck,
  WatchRequest,
} from './payloads';
import { AckErrorSchema } from './ack.schema';
import { ApprovalRequestSchema, compile } from './schemas';
import type { Assert, Same } from './type-checks';

/** Schemas of the human handoff's payloads (docs/handoff.md): A→H `handoff`, `conversation:control`, the operator feed. */

/** A→H `handoff`. */
export const HandoffRequestSchema = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 256, description: 'The clientId of the user who needs a person.' }),
    reason: Type.Optional(Type.String({ maxLength: HANDOFF_REASON_MAX, description: 'Why, for the operators.' })),
    summary: Type.Optional(Type.String({ maxLength: HANDOFF_SUMMARY_MAX, description: 'The conversation so far, for the operators.' })),
  },
  { title: 'HandoffRequest' },
);

/** H→C `conversation:control`. */
export const ClientConversationControlSchema = Type.Object(
  { agentId: AgentIdSchema, control: ControlStateSchema, operator: Type.Optional(OperatorNameSchema) },
  { title: 'ClientConversationControl', description: "Who answers this user now; operator: who joined, while 'human'." },
);

/** H→A and H→O `conversation:control`. */
export const ConversationControlSchema = Type.Object(
  {
    agentId: AgentIdSchema,
    clientId: Type.String(),
    control: ControlStateSchema,
    since: TimeSchema,
    operator: Type.Optional(OperatorNameSchema),
    reason: Type.Optional(Type.String()),
    summary: Type.Optional(Type.String()),
  },
  { title: 'ConversationControl' },
);

/** O→H `conversation:watch`. */
export const WatchRequestSchema = Type.Object(
  { clientId: Type.String({ minLength: 1, maxLength: 256, description: 'The user whose conversation to follow.' }) },
  { title: 'WatchRequest' },
);

/** O→H `approval`: a user's approval request decided by an operator. */
export const OperatorApprovalRequestSchema = Type.Object(
  {
    clientId: Type.String({ minLength: 1, maxLength: 256, description: 'The user whose conversation holds the bot message.' }),
    ...ApprovalRequestSchema.properties,
  },
  { title: 'OperatorApprovalRequest' },
);

/** Ack of `conversation:watch`. */
export const WatchAckSchema = Type.Union(
  [
    Type.Object({
      ok: Type.Literal(true),
      control: ConversationControlSchema,
      messages: Type.Array(ClientInboundMessageSchema),
      streams: Type.Array(MessageStartSchema),
    }),
    Type.Object({ ok: Type.Literal(false), error: AckErrorSchema }),
  ],
  { title: 'WatchAck' },
);

/** H→O `conversation:message`. */
export const OperatorFeedMessageSchema = Type.Object(
  { clientId: Type.String(), message: ClientInboundMessageSchema },
  { title: 'OperatorFeedMessage' },
);

/** H→O `operator:session`. */
export const OperatorSessionSchema = Type.Object(
  { agentId: AgentIdSchema, name: Type.String(), admin: Type.Boolean() },
  { title: 'OperatorSession' },
);

export const OperatorAuthSchema = Type.Object(
  {
    token: Type.String({ description: 'An operator or admin token signed with ADMIN_JWT_SECRET (docs/handoff.md).' }),
    agentId: AgentIdSchema,
  },
  { title: 'OperatorAuth' },
);

/** Ack of `handoff`. */
export const HandoffAckSchema = Type.Union(
  [Type.Object({ ok: Type.Literal(true) }), Type.Object({ ok: Type.Literal(false), error: AckErrorSchema })],
  {
    title: 'HandoffAck',
    description: "ok: the conversation is 'waiting'; CONVERSATION_HELD: an operator holds it already.",
  },
);

export const isHandoffRequest = compile(HandoffRequestSchema);
export const isWatchRequest = compile(WatchRequestSchema);
export const isOperatorApprovalRequest = compile(OperatorApprovalRequestSchema);

export type HandoffSchemasMatchProtocol = [
  Assert<Same<Static<typeof HandoffRequestSchema>, HandoffRequest>>,
  Assert<Same<Static<typeof ClientConversationControlSchema>, ClientConversationControl>>,
  Assert<Same<Static<typeof ConversationControlSchema>, ConversationControl>>,
  Assert<Same<Static<typeof WatchRequestSchema>, WatchRequest>>,
  Assert<Same<Static<typeof WatchAckSchema>, WatchAck>>,
  Assert<Same<Static<typeof OperatorApprovalRequestSchema>, OperatorApprovalRequest>>,
  Assert<Same<Static<typeof OperatorFeedMessageSchema>, OperatorFeedMessage>>,
  Assert<Same<Static<typeof OperatorSessionSchema>, OperatorSession>>,
  Assert<Same<Static<typeof OperatorAuthSchema>, OperatorAuth>>,
];

/**
 * Events of the operator's side (docs/handoff.md): a user's or a bot's socket that sends one gets the
 * ack OPERATOR_REQUIRED, and nothing changes.
 */
export const OperatorOnlyEvents = [Events.conversationControl, Events.conversationWatch] as const;
