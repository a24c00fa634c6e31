import { Namespaces } from '../../protocol';
import { AgentAuthSchema } from '../../protocol/handshake.schema';
import {
  checkAgentId,
  handshakeMiddleware,
  keepAuthFields,
  notDraining,
  memoryBelowHighWater,
  readFailureBudget,
  verifiedUnderFailureLimit,
  type HandshakeCheck,
} from '../handshake';
import type { AgentSocketData, RelayContext } from '../relay.context';
import { agentCredentials } from './agent-credentials';
import type { RuntimePresence } from './runtime-presence';

/** Handshake of `/ws/agent`: unknown `auth` fields dropped, draining, failure rate limit, API key, agentId, the key's bots, then presence. */
export function agentMiddleware(ctx: RelayContext, presence: RuntimePresence) {
  const credentials = agentCredentials(ctx);
  const checks: HandshakeCheck[] = [
    keepAuthFields(AgentAuthSchema),
    notDraining(ctx),
    memoryBelowHighWater(ctx),
    readFailureBudget(ctx),
    credentials.key,
    verifiedUnderFailureLimit(ctx),
    (socket) => {
      const { apiKeyId } = (socket.data ?? {}) as Partial<AgentSocketData>;
      const data: AgentSocketData = { agentId: checkAgentId(socket.handshake.auth?.agentId), ...(apiKeyId ? { apiKeyId } : {}) };
      socket.data = data;
    },
    credentials.bots,
    presence.enter,
  ];
  return handshakeMiddleware(ctx, Namespaces.agent, checks, (socket) => ({
    agentId: (socket.data as AgentSocketData).agentId,
  }));
}
