import type { Server } from 'socket.io';
import { registerAgentHandlers } from './agent/agent.handlers';
import { agentMiddleware } from './agent/agent.middleware';
import { registerClientHandlers } from './client/client.handlers';
import { clientMiddleware } from './client/client.middleware';
import type { RuntimeDispatcher } from './dispatcher';
import { Namespaces } from './protocol';
import type { RelayContext, RelayNamespaces } from './relay.context';
import { RelayService } from './relay.service';

export interface Relay {
  service: RelayService;
  namespaces: RelayNamespaces;
  dispatcher: RuntimeDispatcher;
}

/**
 * Mounts `/ws/agent` and `/ws/client` on `io`: handshake middleware first, so a refused peer never
 * reaches a connection handler, then the event handlers. `createDispatcher` decides how a client
 * message reaches a runtime (locally, or on another replica in a cluster).
 */
export function attachRelay(
  io: Server,
  ctx: RelayContext,
  createDispatcher: (namespaces: RelayNamespaces) => RuntimeDispatcher,
): Relay {
  const namespaces: RelayNamespaces = { agent: io.of(Namespaces.agent), client: io.of(Namespaces.client) };
  const dispatcher = createDispatcher(namespaces);
  const service = new RelayService(ctx, namespaces, dispatcher);
  namespaces.agent.use(agentMiddleware(ctx, service));
  namespaces.client.use(clientMiddleware(ctx));
  registerAgentHandlers(ctx, namespaces.agent, service);
  registerClientHandlers(ctx, namespaces.client, service);
  return { service, namespaces, dispatcher };
}
