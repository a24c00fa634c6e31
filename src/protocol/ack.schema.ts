import { Type, type Static } from '@sinclair/typebox';
import { AckCodeSchema } from './code.schema';
import { MessageIdSchema, TimeSchema } from './common.schema';
import { ApprovalDecisionSchema, ClientInboundMessageSchema } from './outbound.schema';
import type {
  AckError,
  ApprovalAck,
  DebugAck,
  HistoryAck,
  OkAck,
  RefreshAck,
  RuntimeAck,
  SendAck,
  StreamDeltaAck,
  StreamPartAck,
} from './payloads';
import type { Assert, Same } from './type-checks';

/**
 * Schemas of the acks: the hub's answers to C→H and A→H events, and the runtime's answer to an
 * H→A `message`. Every hub ack is `{ ok: true, … }` or `{ ok: false, error: { code, message } }`.
 */

export const AckErrorSchema = Type.Object(
  { code: AckCodeSchema, message: Type.String({ description: "The code's description unless a more specific one is given." }) },
  { title: 'AckError' },
);

const failed = Type.Object({ ok: Type.Literal(false), error: AckErrorSchema });

/** `{ ok, id, ts }` acks; one title per event, since the AsyncAPI document names a channel's messages by title. */
const sendAck = (title: string, description: string) =>
  Type.Union([Type.Object({ ok: Type.Literal(true), id: MessageIdSchema, ts: TimeSchema }), failed], { title, description });

/** Ack of a client `message` and of an agent `reply`. */
export const SendAckSchema = sendAck(
  'SendAck',
  'ok: the message is accepted (for a client message: the chosen runtime acknowledged it) with its id and ts.',
);

/** Ack of `stream:start`. */
export const StreamStartAckSchema = sendAck('StreamStartAck', "ok: the open stream is recorded; id is the message's id from now on.");

/** Ack of `stream:end`. */
export const StreamEndAckSchema = sendAck('StreamEndAck', 'ok: the final message is in the log, at the position of its start.');

/** Ack of an agent `debug`. */
export const DebugAckSchema = Type.Union([Type.Object({ ok: Type.Literal(true) }), failed], { title: 'DebugAck' });

/** Ack of `auth:refresh`. */
export const RefreshAckSchema = Type.Union(
  [Type.Object({ ok: Type.Literal(true), tokenExpiresAt: Type.Union([TimeSchema, Type.Null()]) }), failed],
  { title: 'RefreshAck', description: 'ok: the session continues under the new token, which expires at tokenExpiresAt.' },
);

/** Ack of `history`. */
export const HistoryAckSchema = Type.Union(
  [
    Type.Object({
      ok: Type.Literal(true),
      messages: Type.Array(ClientInboundMessageSchema, { description: 'Oldest first.' }),
      hasMore: Type.Boolean({ description: 'Older messages exist before the first one.' }),
    }),
    failed,
  ],
  { title: 'HistoryAck' },
);

/** Ack of `stream:delta`, when the runtime asks for one. */
export const StreamDeltaAckSchema = Type.Union([Type.Object({ ok: Type.Literal(true), seq: Type.Integer({ minimum: 1 }) }), failed], {
  title: 'StreamDeltaAck',
  description: "ok: the delta is the stream's seq-th.",
});

/** Ack of `stream:update`. */
export const StreamUpdateAckSchema = Type.Union([Type.Object({ ok: Type.Literal(true), seq: Type.Integer({ minimum: 1 }) }), failed], {
  title: 'StreamUpdateAck',
  description: "ok: the update is the stream's seq-th change.",
});

/** Ack of `stream:part`. */
export const StreamPartAckSchema = Type.Union(
  [Type.Object({ ok: Type.Literal(true), seq: Type.Integer({ minimum: 1 }), index: Type.Integer({ minimum: 0 }) }), failed],
  { title: 'StreamPartAck', description: "ok: the part is the stream's seq-th change, at index." },
);

/** Ack of a client `approval`. */
export const ApprovalAckSchema = Type.Union(
  [
    Type.Object({ ok: Type.Literal(true), decision: ApprovalDecisionSchema }),
    Type.Object({
      ok: Type.Literal(false),
      error: AckErrorSchema,
      decision: Type.Optional(ApprovalDecisionSchema),
    }),
  ],
  {
    title: 'ApprovalAck',
    description: 'ok: the decision is recorded, shown to every tab and acked by a runtime of the bot. A repeat of it is ok again.',
  },
);

/** An `{ ok }` ack; one title per event, since the AsyncAPI document names a channel's messages by title. */
const okAck = (title: string) => Type.Union([Type.Object({ ok: Type.Literal(true) }), failed], { title });

/** Acks of `activity`, `stop` and `feedback`. */
export const ActivityAckSchema = okAck('ActivityAck');
export const StopAckSchema = okAck('StopAck');
export const FeedbackAckSchema = okAck('FeedbackAck');

/** The runtime's ack of an H→A `message`. */
export const RuntimeAckSchema = Type.Object(
  { ok: Type.Boolean() },
  { title: 'RuntimeAck', description: 'Sent by the runtime on receipt (the agent SDK does it) within AGENT_ACK_TIMEOUT_MS.' },
);

/** The runtime's ack of an H→A `approval`. */
export const RuntimeApprovalAckSchema = Type.Object(
  { ok: Type.Boolean() },
  { title: 'RuntimeApprovalAck', description: 'Sent by the runtime on receipt (the agent SDK does it) within AGENT_ACK_TIMEOUT_MS.' },
);

export type AckSchemasMatchProtocol = [
  Assert<Same<Static<typeof AckErrorSchema>, AckError>>,
  Assert<Same<Static<typeof SendAckSchema>, SendAck>>,
  Assert<Same<Static<typeof DebugAckSchema>, DebugAck>>,
  Assert<Same<Static<typeof RefreshAckSchema>, RefreshAck>>,
  Assert<Same<Static<typeof HistoryAckSchema>, HistoryAck>>,
  Assert<Same<Static<typeof RuntimeAckSchema>, RuntimeAck>>,
  Assert<Same<Static<typeof StreamDeltaAckSchema>, StreamDeltaAck>>,
  Assert<Same<Static<typeof StreamStartAckSchema>, SendAck>>,
  Assert<Same<Static<typeof StreamEndAckSchema>, SendAck>>,
  Assert<Same<Static<typeof ActivityAckSchema>, OkAck>>,
  Assert<Same<Static<typeof StopAckSchema>, OkAck>>,
  Assert<Same<Static<typeof FeedbackAckSchema>, OkAck>>,
  Assert<Same<Static<typeof StreamUpdateAckSchema>, StreamDeltaAck>>,
  Assert<Same<Static<typeof StreamPartAckSchema>, StreamPartAck>>,
  Assert<Same<Static<typeof ApprovalAckSchema>, ApprovalAck>>,
  Assert<Same<Static<typeof RuntimeApprovalAckSchema>, RuntimeAck>>,
];
