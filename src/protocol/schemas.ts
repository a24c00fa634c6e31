import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { MessageDataSchema as MessageData } from './common.schemas';
import { HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT } from './names';
import type { AgentDebug, AgentReply, AuthRefresh, ClientMessage, HistoryRequest } from './payloads';
import type { Assert, Same } from './type-checks';

/**
 * Validation schemas of the inbound payloads declared in `payloads.ts`. The `Same` checks below
 * fail the build if a schema and its wire type drift apart. Outbound payloads, acks and the
 * handshake have theirs in `outbound.schemas.ts`, `ack.schemas.ts` and `handshake.schemas.ts`;
 * `protocol.registry.ts` ties them all to their events.
 */

export const ClientMessageSchema = Type.Object(
  {
    clientMessageId: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'Chosen by the client; a repeat within DEDUPE_WINDOW_S is not delivered twice.',
    }),
    text: Type.String({ description: 'At most MAX_MESSAGE_BYTES UTF-8 bytes, like the whole payload.' }),
    data: Type.Optional(MessageData),
  },
  { title: 'ClientMessage' },
);

export const AgentReplySchema = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 256, description: "A clientId, or '*' for every client of the bot." }),
    text: Type.String({ description: 'At most MAX_MESSAGE_BYTES UTF-8 bytes, like the whole payload.' }),
    data: Type.Optional(MessageData),
    replyTo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The id of the message this one answers.' })),
  },
  { title: 'AgentReply' },
);

export const AgentDebugSchema = Type.Object(
  {
    clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Labels the conversation the trace belongs to.' })),
    trace: Type.Unknown({ description: 'Any JSON value.' }),
  },
  { title: 'AgentDebug' },
);

export const AuthRefreshSchema = Type.Object({ token: Type.String({ minLength: 1 }) }, { title: 'AuthRefresh' });

export const HistoryRequestSchema = Type.Object(
  {
    before: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'A message id; the page ends before it. Unset: the newest.' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: HISTORY_MAX_LIMIT, default: HISTORY_DEFAULT_LIMIT })),
  },
  { title: 'HistoryRequest' },
);

export type SchemasMatchProtocol = [
  Assert<Same<Static<typeof ClientMessageSchema>, Omit<ClientMessage, 'data'> & { data?: Static<typeof MessageData> }>>,
  Assert<Same<Static<typeof AgentReplySchema>, Omit<AgentReply, 'data'> & { data?: Static<typeof MessageData> }>>,
  Assert<Same<Static<typeof AgentDebugSchema>, AgentDebug>>,
  Assert<Same<Static<typeof AuthRefreshSchema>, AuthRefresh>>,
  Assert<Same<Static<typeof HistoryRequestSchema>, HistoryRequest>>,
];

/** A compiled validator: `check(value)` narrows `value` to the schema's type. */
export function compile<T extends TSchema>(schema: T): (value: unknown) => value is Static<T> {
  const checker = TypeCompiler.Compile(schema);
  return (value: unknown): value is Static<T> => checker.Check(value);
}

export const isClientMessage = compile(ClientMessageSchema);
export const isAgentReply = compile(AgentReplySchema);
export const isAgentDebug = compile(AgentDebugSchema);
export const isAuthRefresh = compile(AuthRefreshSchema);
export const isHistoryRequest = compile(HistoryRequestSchema);
