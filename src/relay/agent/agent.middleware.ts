import { handshakeMiddleware, HandshakeError, notDraining, underFailureLimit, type HandshakeCheck } from '../handshake';
import { AGENT_ID_PATTERN, Namespaces } from '../protocol';
import type { AgentSocketData, RelayContext } from '../relay.context';
import type { RelayService } from '../relay.service';
import { enterPresence } from './agent.handlers';

/** Handshake of `/ws/agent`: draining, failure rate limit, API key, agentId, then presence. */
export function agentMiddleware(ctx: RelayContext, relay: RelayService) {
  const checks: HandshakeCheck[] = [
    notDraining(ctx),
    underFailureLimit(ctx),
    (socket) => {
      const auth = socket.handshake.auth as { apiKey?: unknown } | undefined;
      const matches = ctx.agentKeys.matches(auth?.apiKey);
      // Not kept for the socket's life (memory, heap dumps), like the client token.
      if (auth) auth.apiKey = undefined;
      if (!matches) throw new HandshakeError('API_KEY_INVALID');
    },
    (socket) => {
      const data: AgentSocketData = { agentId: checkAgentId(socket.handshake.auth?.agentId) };
      socket.data = data;
    },
    enterPresence(ctx, relay),
  ];
  return handshakeMiddleware(ctx, Namespaces.agent, checks, (socket) => ({
    agentId: (socket.data as AgentSocketData).agentId,
  }));
}

/** Returns a valid agentId or throws AGENT_ID_REQUIRED / AGENT_ID_INVALID. */
export function checkAgentId(agentId: unknown): string {
  if (agentId === undefined || agentId === null || agentId === '') throw new HandshakeError('AGENT_ID_REQUIRED');
  if (typeof agentId !== 'string' || !AGENT_ID_PATTERN.test(agentId)) throw new HandshakeError('AGENT_ID_INVALID');
  return agentId;
}
