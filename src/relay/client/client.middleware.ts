import type { Socket } from 'socket.io';
import type { ConnectionInfoRegistry } from '../../net/connection-info';
import {
  checkAgentId,
  handshakeMiddleware,
  HandshakeError,
  keepAuthFields,
  notDraining,
  memoryBelowHighWater,
  readFailureBudget,
  subscriptionsIntact,
  verifiedUnderFailureLimit,
  type HandshakeCheck,
} from '../handshake';
import { Namespaces } from '../../protocol';
import { ClientAuthSchema } from '../../protocol/handshake.schema';
import type { ClientSocketData, RelayContext } from '../relay.context';
import { agentAllowed } from '../../auth/agent-patterns';
import { isOperatorOnly, type ClientIdentity } from '../../auth/identity';

/**
 * Handshake checks of `/ws/client`, in order: unknown `auth` fields dropped, draining, Origin, failure rate
 * limit, token, agentId, the token's `agentIds` (exact ids, or prefixes ending in `*` as a bound key
 * mints them), deactivation, this replica's subscriptions intact.
 */
export function clientMiddleware(ctx: RelayContext) {
  const identities = new WeakMap<Socket, ClientIdentity>();
  const checks: HandshakeCheck[] = [
    keepAuthFields(ClientAuthSchema),
    notDraining(ctx),
    memoryBelowHighWater(ctx),
    originAllowed(ctx.config.CORS_ORIGINS, ctx.connections),
    readFailureBudget(ctx),
    (socket, attempt) => {
      const auth = socket.handshake.auth as { token?: unknown } | undefined;
      const result = ctx.jwt.verify(auth?.token);
      // Nothing reads the token after this check (its expiry is in socket.data), so the handshake
      // does not keep it: a bearer token per socket for the session's life, in memory and in heap dumps.
      if (auth) auth.token = undefined;
      const sub = result.ok ? result.identity.sub : result.sub;
      if (sub !== undefined) attempt.identity = `sub:${sub}`;
      if (!result.ok) throw new HandshakeError(result.code);
      // An operator token opens the console's feed (/ws/operator), never a chat as its holder.
      if (isOperatorOnly(result.identity)) throw new HandshakeError('TOKEN_INVALID');
      identities.set(socket, result.identity);
    },
    verifiedUnderFailureLimit(ctx),
    (socket) => {
      // Taken out, not just read: the map would otherwise hold every identity as long as its socket.
      const identity = identities.get(socket)!;
      identities.delete(socket);
      const agentId = checkAgentId(socket.handshake.auth?.agentId);
      if (identity.agentIds && !agentAllowed(identity.agentIds, agentId)) throw new HandshakeError('AGENT_NOT_ALLOWED');
      const data: ClientSocketData = {
        clientId: identity.clientId,
        sub: identity.sub,
        // Kept only for the connect line, and not at all when it may not be logged.
        ...(identity.email === undefined || !ctx.config.LOG_PERSONAL_DATA ? {} : { email: identity.email }),
        roles: identity.roles,
        agentId,
        tokenExpiresAt: identity.expiresAtMs === null ? null : new Date(identity.expiresAtMs).toISOString(),
      };
      socket.data = data;
    },
    async (socket) => {
      if (await ctx.store.deactivations.isDeactivated((socket.data as ClientSocketData).sub)) {
        throw new HandshakeError('USER_DEACTIVATED');
      }
    },
    // Last, so a bad token is told so even then.
    subscriptionsIntact(ctx),
  ];
  return handshakeMiddleware(ctx, Namespaces.client, checks, (socket) => {
    const data = socket.data as ClientSocketData;
    const email = ctx.config.LOG_PERSONAL_DATA ? { email: data.email } : {};
    return { agentId: data.agentId, clientId: data.clientId, sub: data.sub, ...email };
  });
}

/**
 * Browsers always send Origin on websocket and polling requests, and `cors` settings do not
 * stop a websocket, so the allowlist is enforced here. Non-browser peers send none.
 */
export function originAllowed(origins: readonly string[], connections: ConnectionInfoRegistry): HandshakeCheck {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return (socket) => {
    const { origin } = connections.of(socket);
    if (any || origin === undefined || allowed.has(origin)) return;
    throw new HandshakeError('ORIGIN_NOT_ALLOWED');
  };
}
