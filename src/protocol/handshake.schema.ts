import { Type, type Static } from '@sinclair/typebox';
import { HandshakeCodeSchema } from './code.schema';
import { AgentIdSchema } from './common.schema';
import type { AgentAuth, ClientAuth, HandshakeErrorData } from './payloads';
import type { Assert, Same } from './type-checks';

/**
 * Schemas of the handshake: the `auth` object each namespace takes, and the refusal's `err.data`.
 * The middleware checks credentials step by step (each with its own code); these describe them.
 */

export const AgentAuthSchema = Type.Object(
  {
    apiKey: Type.String({ description: 'One of AGENT_API_KEYS, or a managed API key with scope agent:connect for this bot.' }),
    agentId: AgentIdSchema,
  },
  { title: 'AgentAuth' },
);

export const ClientAuthSchema = Type.Object(
  {
    token: Type.String({ description: 'A client JWT (HS256 by default) with sub and exp; see POST /auth/embed/token.' }),
    agentId: AgentIdSchema,
    lastMessageId: Type.Optional(
      Type.String({ description: 'The id of the last message this client saw; the hub replays what came after it.' }),
    ),
  },
  { title: 'ClientAuth' },
);

export const HandshakeErrorDataSchema = Type.Object(
  { code: HandshakeCodeSchema, retryable: Type.Boolean() },
  { title: 'HandshakeErrorData', description: 'err.data of the connect_error a refused handshake gets.' },
);

export type HandshakeSchemasMatchProtocol = [
  Assert<Same<Static<typeof AgentAuthSchema>, AgentAuth>>,
  Assert<Same<Static<typeof ClientAuthSchema>, ClientAuth>>,
  Assert<Same<Static<typeof HandshakeErrorDataSchema>, HandshakeErrorData>>,
];
