import { timingSafeEqual } from 'node:crypto';
import { agentAllowed, keyAgentPatterns } from '../../auth/agent-patterns';
import { sha256 } from '../../auth/agent-keys';
import { HandshakeError, type HandshakeCheck } from '../handshake';
import type { AgentSocketData, RelayContext } from '../relay.context';

/** The scope a managed API key needs to serve bots at `/ws/agent`. */
export const AGENT_CONNECT_SCOPE = 'agent:connect';

/**
 * The credential step of `/ws/agent` (docs/rest.md, "API keys"). The shared AGENT_API_KEYS (unless
 * AGENT_SHARED_KEYS_ENABLED=false) serve any bot and are checked in memory first; anything else is
 * looked up once by hash among the managed keys (REST `createApiKey`), compared in constant time,
 * and must carry `agent:connect`. Which bots a managed key serves is checked after agentId, so a
 * key bound elsewhere gets AGENT_NOT_ALLOWED and its failures count against the key's identity.
 */
export function agentCredentials(ctx: RelayContext): { key: HandshakeCheck; bots: HandshakeCheck } {
  const allowed = new WeakMap<object, readonly string[]>();
  const key: HandshakeCheck = async (socket, attempt) => {
    const auth = socket.handshake.auth as { apiKey?: unknown } | undefined;
    const presented = auth?.apiKey;
    // Not kept for the socket's life (memory, heap dumps), like the client token.
    if (auth) auth.apiKey = undefined;
    const shared = ctx.agentKeys?.match(presented) ?? null;
    if (shared !== null) {
      attempt.identity = shared;
      return;
    }
    if (typeof presented !== 'string' || presented.length === 0) throw new HandshakeError('API_KEY_INVALID');
    const digest = sha256(presented);
    const record = await ctx.store.apiKeys.findByHash(digest.toString('hex'));
    const stored = record ? Buffer.from(record.hash, 'hex') : null;
    if (!record || !stored || stored.length !== digest.length || !timingSafeEqual(stored, digest)) {
      throw new HandshakeError('API_KEY_INVALID');
    }
    if (!record.scopes.includes(AGENT_CONNECT_SCOPE)) throw new HandshakeError('API_KEY_INVALID');
    attempt.identity = `key:${record.id}`;
    allowed.set(attempt, keyAgentPatterns(record));
    socket.data = { apiKeyId: record.id } as Partial<AgentSocketData>;
  };
  const bots: HandshakeCheck = (socket, attempt) => {
    const patterns = allowed.get(attempt);
    if (patterns === undefined) return;
    if (!agentAllowed(patterns, (socket.data as AgentSocketData).agentId)) throw new HandshakeError('AGENT_NOT_ALLOWED');
  };
  return { key, bots };
}
