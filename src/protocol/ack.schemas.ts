import { Type, type Static } from '@sinclair/typebox';
import { AckCodeSchema } from './code.schemas';
import { MessageIdSchema, TimeSchema } from './common.schemas';
import { ClientInboundMessageSchema } from './outbound.schemas';
import type { AckError, DebugAck, HistoryAck, RefreshAck, RuntimeAck, SendAck } from './payloads';
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

/** Ack of a client `message` and of an agent `reply`. */
export const SendAckSchema = Type.Union([Type.Object({ ok: Type.Literal(true), id: MessageIdSchema, ts: TimeSchema }), failed], {
  title: 'SendAck',
  description: 'ok: the message is accepted (for a client message: the chosen runtime acknowledged it) with its id and ts.',
});

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

/** The runtime's ack of an H→A `message`. */
export const RuntimeAckSchema = Type.Object(
  { ok: Type.Boolean() },
  { title: 'RuntimeAck', description: 'Sent by the runtime on receipt (the agent SDK does it) within AGENT_ACK_TIMEOUT_MS.' },
);

export type AckSchemasMatchProtocol = [
  Assert<Same<Static<typeof AckErrorSchema>, AckError>>,
  Assert<Same<Static<typeof SendAckSchema>, SendAck>>,
  Assert<Same<Static<typeof DebugAckSchema>, DebugAck>>,
  Assert<Same<Static<typeof RefreshAckSchema>, RefreshAck>>,
  Assert<Same<Static<typeof HistoryAckSchema>, HistoryAck>>,
  Assert<Same<Static<typeof RuntimeAckSchema>, RuntimeAck>>,
];
