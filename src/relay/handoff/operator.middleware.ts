import type { Socket } from 'socket.io';
import { operatesFor, type ClientIdentity } from '../../auth/identity';
import { Namespaces } from '../../protocol';
import { OperatorAuthSchema } from '../../protocol/handoff.schema';
import { originAllowed } from '../client/client.middleware';
import {
  checkAgentId,
  handshakeMiddleware,
  HandshakeError,
  keepAuthFields,
  memoryBelowHighWater,
  notDraining,
  readFailureBudget,
  subscriptionsIntact,
  verifiedUnderFailureLimit,
  type HandshakeCheck,
} from '../handshake';
import type { OperatorSocketData, RelayContext } from '../relay.context';

/**
 * Handshake checks of `/ws/operator` (docs/handoff.md), in order: unknown `auth` fields dropped,
 * draining, memory, Origin, failure rate limit, token (an operator or admin token signed with
 * ADMIN_JWT_SECRET, else OPERATOR_REQUIRED), agentId within the operator's `agentIds`,
 * deactivation, this replica's subscriptions intact.
 */
export function operatorMiddleware(ctx: RelayContext) {
  const identities = new WeakMap<Socket, ClientIdentity>();
  const checks: HandshakeCheck[] = [
    keepAuthFields(OperatorAuthSchema),
    notDraining(ctx),
    memoryBelowHighWater(ctx),
    originAllowed(ctx.config.CORS_ORIGINS, ctx.connections),
    readFailureBudget(ctx),
    (socket, attempt) => {
      const auth = socket.handshake.auth as { token?: unknown } | undefined;
      const result = ctx.jwt.verify(auth?.token);
      if (auth) auth.token = undefined;
      const sub = result.ok ? result.identity.sub : result.sub;
      if (sub !== undefined) attempt.identity = `sub:${sub}`;
      if (!result.ok)
        throw new HandshakeError(result.code === 'SUB_RESERVED' || result.code === 'SUB_REQUIRED' ? 'TOKEN_INVALID' : result.code);
      if (result.identity.operator === undefined) throw new HandshakeError('OPERATOR_REQUIRED');
      identities.set(socket, result.identity);
    },
    verifiedUnderFailureLimit(ctx),
    (socket) => {
      const identity = identities.get(socket)!;
      identities.delete(socket);
      const agentId = checkAgentId(socket.handshake.auth?.agentId);
      if (!operatesFor(identity, agentId)) throw new HandshakeError('AGENT_NOT_ALLOWED');
      const data: OperatorSocketData = { agentId, sub: identity.sub, name: identity.operator!.name, admin: identity.isAdmin };
      socket.data = data;
    },
    async (socket) => {
      if (await ctx.store.deactivations.isDeactivated((socket.data as OperatorSocketData).sub))
        throw new HandshakeError('USER_DEACTIVATED');
    },
    subscriptionsIntact(ctx),
  ];
  return handshakeMiddleware(ctx, Namespaces.operator, checks, (socket) => {
    const data = socket.data as OperatorSocketData;
    return { agentId: data.agentId, operator: data.sub };
  });
}
