import type { Namespace } from 'socket.io';

/**
 * Room names, kept here alone. `#` cannot occur in an agentId, so every name parses one way even
 * though a clientId (a JWT `sub`) may contain any character.
 */
export const Rooms = {
  /** Every runtime of a bot. */
  runtimes: (agentId: string) => `runtimes#${agentId}`,
  /** Every socket (tab) of one clientId of a bot; `'admin'` holds all its admins. */
  client: (agentId: string, clientId: string) => `client#${agentId}#${clientId}`,
  /** Every client socket of a bot. */
  clients: (agentId: string) => `clients#${agentId}`,
  /** Admin client sockets of a bot (receivers of the debug stream). */
  admins: (agentId: string) => `admins#${agentId}`,
  /** Every client socket of one subject, across bots (deactivation). */
  subject: (sub: string) => `sub#${sub}`,
  /** Operator namespace: every console of a bot (docs/handoff.md). */
  operators: (agentId: string) => `operators#${agentId}`,
  /** Operator namespace: the consoles following one conversation. */
  watchers: (agentId: string, clientId: string) => `watch#${agentId}#${clientId}`,
  /** Every agent runtime that connected with one managed API key (revocation). */
  apiKey: (keyId: string) => `key#${keyId}`,
} as const;

/**
 * `nsp.to(room)`, without this replica's own sockets of the room unless `here`: while its Redis
 * subscriptions have a gap it hands its sockets nothing (see RelayContext.subscriptionsIntact), yet
 * the other replicas still get what it sends.
 */
export function toRoom(nsp: Namespace, room: string, here: boolean) {
  const local = here ? undefined : nsp.adapter.rooms.get(room);
  return local && local.size > 0 ? nsp.to(room).except([...local]) : nsp.to(room);
}
