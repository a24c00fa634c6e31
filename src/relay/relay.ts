import type { Server } from 'socket.io';
import { Namespaces } from '../protocol';
import { registerAgentHandlers } from './agent/agent.handlers';
import { agentMiddleware } from './agent/agent.middleware';
import { RuntimePresence } from './agent/runtime-presence';
import { registerClientHandlers } from './client/client.handlers';
import { registerOperatorHandlers } from './handoff/operator.handlers';
import { operatorMiddleware } from './handoff/operator.middleware';
import { clientMiddleware } from './client/client.middleware';
import type { AgentStatusAnnouncer } from './agent-status';
import type { RuntimeDispatcher } from './dispatcher';
import type { RelayContext, RelayNamespaces } from './relay.context';
import { RelayService } from './relay.service';
import { refuseEveryConnection } from './handshake';
import { StreamService } from './streams/stream.service';
import { UserActions } from './streams/user-actions';

/** The relay's namespaces of `io`. Create them after the adapter is installed. */
export function relayNamespaces(io: Server): RelayNamespaces {
  return { agent: io.of(Namespaces.agent), client: io.of(Namespaces.client), operator: io.of(Namespaces.operator) };
}

/** Closes the default namespace `/` of `io` to every connection (see {@link refuseEveryConnection}). */
export function closeDefaultNamespace(io: Server, ctx: RelayContext): void {
  io.of('/').use(refuseEveryConnection(ctx));
}

/**
 * Mounts the relay on `/ws/agent` and `/ws/client`: handshake middleware first, so a refused peer
 * never reaches a connection handler, then the event handlers. `dispatcher` decides how a client
 * message reaches a runtime (locally, or on another replica in a cluster). Returns the service
 * that REST shares with the sockets, and the streamed replies' service (its sweep is started by the hub).
 */
export function attachRelay(
  namespaces: RelayNamespaces,
  ctx: RelayContext,
  dispatcher: RuntimeDispatcher,
  statuses: AgentStatusAnnouncer,
): { service: RelayService; streams: StreamService } {
  const service = new RelayService(ctx, namespaces, dispatcher, statuses);
  const streams = new StreamService(ctx, namespaces, service.activity, service.deliveries, service.feed);
  const presence = new RuntimePresence(ctx, service);
  namespaces.agent.use(agentMiddleware(ctx, presence));
  namespaces.client.use(clientMiddleware(ctx));
  const actions = new UserActions(ctx, namespaces, streams, dispatcher, service.users);
  registerAgentHandlers(ctx, namespaces.agent, service, presence, streams, actions);
  // An answer under way when an operator takes the conversation over stops, as if the user pressed Stop.
  service.control.stopStreams = (agentId, clientId) => actions.stopConversation(agentId, clientId);
  registerClientHandlers(ctx, namespaces.client, service, streams, actions);
  namespaces.operator.use(operatorMiddleware(ctx));
  registerOperatorHandlers(ctx, namespaces.operator, service, streams, actions);
  return { service, streams };
}
