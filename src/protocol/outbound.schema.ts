import { Type, type Static } from '@sinclair/typebox';
import { SessionClosedCodeSchema } from './code.schema';
import {
  ActivityStateSchema,
  AgentIdSchema,
  MessageDataSchema,
  MessageIdSchema,
  RatingSchema,
  StreamStatusSchema,
  TimeSchema,
} from './common.schema';
import { Authors } from './names';
import { MessagePartSchema, PartsSchema } from './parts.schema';
import { ControlStateSchema, OperatorNameSchema } from './control.schema';
import type {
  AgentActivity,
  AgentApproval,
  AgentFeedback,
  AgentInboundMessage,
  ApprovalDecision,
  MessagePartEvent,
  AgentStop,
  MessageDelta,
  MessageEnd,
  MessageFeedback,
  MessageStart,
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
    parts: Type.Optional(PartsSchema),
    observed: Type.Optional(
      Type.Literal(true, { description: 'An operator holds the conversation: keep the context, do not answer (docs/handoff.md).' }),
    ),
  },
  { title: 'AgentInboundMessage' },
);

/** The latest rating of a bot message, as history and REST show it. */
export const MessageFeedbackSchema = Type.Object(
  { rating: RatingSchema, comment: Type.Optional(Type.String()), ts: TimeSchema },
  { title: 'MessageFeedback' },
);

/** H→C `message`. */
export const ClientInboundMessageSchema = Type.Object(
  {
    id: MessageIdSchema,
    ts: TimeSchema,
    agentId: AgentIdSchema,
    author: Type.Union(
      [Type.Literal(Authors.agent), Type.Literal(Authors.user), Type.Literal(Authors.operator), Type.Literal(Authors.system)],
      {
        description:
          "'agent' for replies, REST publishes and broadcasts; 'user' for the user's own messages (other tabs, history); 'operator' for a person who took over; 'system' for a change of who answers (docs/handoff.md).",
      },
    ),
    text: Type.String({ description: 'The concatenation of the text parts.' }),
    data: Type.Optional(MessageDataSchema),
    parts: Type.Optional(PartsSchema),
    replyTo: Type.Optional(Type.String({ description: 'The id of the message this one answers.' })),
    clientMessageId: Type.Optional(Type.String({ description: "On 'user' messages: the sender's clientMessageId." })),
    status: Type.Optional(
      Type.Union([Type.Literal('error'), Type.Literal('cancelled'), Type.Literal('interrupted'), Type.Literal('timeout')], {
        description: 'On a streamed message that did not end complete: how it ended.',
      }),
    ),
    feedback: Type.Optional(MessageFeedbackSchema),
    streaming: Type.Optional(
      Type.Literal(true, { description: "On a streamed message still open (history, REST): shown as its start, text ''." }),
    ),
    operator: Type.Optional(OperatorNameSchema),
    control: Type.Optional(ControlStateSchema),
  },
  { title: 'ClientInboundMessage' },
);

const agentAuthor = Type.Literal(Authors.agent);

/** H→C `message:start`. */
export const MessageStartSchema = Type.Object(
  {
    id: MessageIdSchema,
    ts: TimeSchema,
    agentId: AgentIdSchema,
    author: agentAuthor,
    replyTo: Type.Optional(Type.String({ description: 'The id of the message this one answers.' })),
    data: Type.Optional(MessageDataSchema),
    text: Type.String({ description: "The accumulated text so far ('' at a fresh start)." }),
    parts: Type.Optional(Type.Array(MessagePartSchema, { description: 'The parts so far; absent while the stream is plain text.' })),
    seq: Type.Integer({ minimum: 0, description: 'How many changes (deltas, parts, updates) the snapshot contains.' }),
  },
  { title: 'MessageStart' },
);

/** H→C `message:delta`. */
export const MessageDeltaSchema = Type.Object(
  {
    id: MessageIdSchema,
    seq: Type.Integer({ minimum: 1, description: 'Counts from 1 per stream; append when it is one more than the changes held.' }),
    text: Type.String(),
    index: Type.Integer({ minimum: 0, description: 'The part it appends to; the number of parts held opens a new text part.' }),
  },
  { title: 'MessageDelta' },
);

/** H→C `message:part`. */
export const MessagePartEventSchema = Type.Object(
  {
    id: MessageIdSchema,
    seq: Type.Integer({
      minimum: 0,
      description:
        'The change it is, as for message:delta; 0 on a message that is no longer streaming (an approval decided after its end).',
    }),
    index: Type.Integer({ minimum: 0, description: 'A new part when it is the number of parts held; else it replaces that part.' }),
    part: MessagePartSchema,
  },
  {
    title: 'MessagePartEvent',
    examples: [
      {
        id: '0190a5e0-0000-7000-8000-000000000001',
        seq: 3,
        index: 1,
        part: { type: 'source', sourceId: 's1', url: 'https://example.com' },
      },
    ],
  },
);

/** H→C `message:end`. */
export const MessageEndSchema = Type.Object(
  {
    id: MessageIdSchema,
    ts: TimeSchema,
    agentId: AgentIdSchema,
    author: agentAuthor,
    text: Type.String({ description: 'Final; replaces what the client holds.' }),
    data: Type.Optional(MessageDataSchema),
    parts: Type.Optional(Type.Array(MessagePartSchema, { description: 'Final; absent when the message is plain text.' })),
    replyTo: Type.Optional(Type.String()),
    status: StreamStatusSchema,
  },
  { title: 'MessageEnd' },
);

/** H→C `agent:activity`. */
export const AgentActivitySchema = Type.Object(
  { agentId: AgentIdSchema, state: ActivityStateSchema, label: Type.Optional(Type.String()), ts: TimeSchema },
  { title: 'AgentActivity', description: 'Ephemeral: not logged, not replayed.' },
);

/** H→A `stop`. */
export const AgentStopSchema = Type.Object(
  {
    id: Type.Optional(MessageIdSchema),
    messageId: Type.Optional(Type.String({ description: 'The client message the stream answers, when the user stopped by it.' })),
    from: Type.String({ description: 'The clientId that asked.' }),
  },
  { title: 'AgentStop', description: 'End that stream with status cancelled within STREAM_STOP_GRACE_MS, or the hub ends it.' },
);

/** H→A `feedback`. */
export const AgentFeedbackSchema = Type.Object(
  {
    id: MessageIdSchema,
    from: Type.String(),
    rating: Type.Union([RatingSchema, Type.Null()]),
    comment: Type.Optional(Type.String()),
  },
  { title: 'AgentFeedback' },
);

/** A recorded approval decision. */
export const ApprovalDecisionSchema = Type.Object(
  {
    approved: Type.Boolean(),
    reason: Type.Optional(Type.String()),
    decidedBy: Type.String({ description: 'The clientId that decided.' }),
    ts: TimeSchema,
  },
  { title: 'ApprovalDecision', examples: [{ approved: true, decidedBy: 'user-42', ts: '2026-01-01T00:00:00.000Z' }] },
);

/** H→A `approval`. */
export const AgentApprovalSchema = Type.Object(
  {
    id: Type.String({ description: 'The approval id; a runtime drops one it has handled.' }),
    messageId: MessageIdSchema,
    toolCallId: Type.String(),
    from: Type.String({ description: 'The clientId that decided.' }),
    approved: Type.Boolean(),
    reason: Type.Optional(Type.String()),
    ts: TimeSchema,
  },
  { title: 'AgentApproval', description: 'Acked by the runtime; redelivered until acked.' },
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
    hasMore: Type.Optional(
      Type.Literal(true, {
        description:
          'With recovered: true, when the replay was cut to REPLAY_MAX_BYTES: it held the newest missed messages; page the older ones with history before the oldest replayed.',
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
  Assert<Same<Static<typeof MessageFeedbackSchema>, MessageFeedback>>,
  Assert<Same<Static<typeof MessageStartSchema>, MessageStart>>,
  Assert<Same<Static<typeof MessageDeltaSchema>, MessageDelta>>,
  Assert<Same<Static<typeof MessageEndSchema>, MessageEnd>>,
  Assert<Same<Static<typeof AgentActivitySchema>, AgentActivity>>,
  Assert<Same<Static<typeof AgentStopSchema>, AgentStop>>,
  Assert<Same<Static<typeof AgentFeedbackSchema>, AgentFeedback>>,
  Assert<Same<Static<typeof MessagePartEventSchema>, MessagePartEvent>>,
  Assert<Same<Static<typeof ApprovalDecisionSchema>, ApprovalDecision>>,
  Assert<Same<Static<typeof AgentApprovalSchema>, AgentApproval>>,
];
