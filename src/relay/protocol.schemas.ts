import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { AgentDebug, AgentReply, AuthRefresh, ClientMessage } from './protocol';

/**
 * Validation schemas of the inbound payloads declared in `protocol.ts`. The `Same` checks below
 * fail the build if a schema and its wire type drift apart.
 */
const MessageData = Type.Object({}, { additionalProperties: true });

export const ClientMessageSchema = Type.Object({
  clientMessageId: Type.String({ minLength: 1, maxLength: 64 }),
  text: Type.String(),
  data: Type.Optional(MessageData),
});

export const AgentReplySchema = Type.Object({
  to: Type.String({ minLength: 1, maxLength: 256 }),
  text: Type.String(),
  data: Type.Optional(MessageData),
  replyTo: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

export const AgentDebugSchema = Type.Object({
  clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  trace: Type.Unknown(),
});

export const AuthRefreshSchema = Type.Object({ token: Type.String({ minLength: 1 }) });

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type SchemasMatchProtocol = [
  Assert<Same<Static<typeof ClientMessageSchema>, Omit<ClientMessage, 'data'> & { data?: Static<typeof MessageData> }>>,
  Assert<Same<Static<typeof AgentReplySchema>, Omit<AgentReply, 'data'> & { data?: Static<typeof MessageData> }>>,
  Assert<Same<Static<typeof AgentDebugSchema>, AgentDebug>>,
  Assert<Same<Static<typeof AuthRefreshSchema>, AuthRefresh>>,
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
