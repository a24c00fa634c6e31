import type { Namespace, Server, Socket } from 'socket.io';

/**
 * Socket.IO lists its namespaces only in `Server#_nsps` (public in the typings, private by name and
 * documentation). The hub reads it to restore every adapter's subscriptions after a Redis outage.
 * And it writes a frame around JSON serialized already (a message handed over by another replica)
 * with the socket's private ack bookkeeping ({@link emitJsonWithAck}). This module is the only place
 * that names those members, checked by test/integration/internals/socket-io.internals.test.ts.
 */
export const SOCKET_IO_CHECKED = { package: 'socket.io', versions: ['4.8.4'] } as const;

/** Every namespace `io` has created, the main one (`/`) included. */
export function namespacesOf(io: Server): Namespace[] {
  const nsps = (io as unknown as { _nsps?: Map<string, Namespace> })._nsps;
  if (!(nsps instanceof Map)) {
    throw new Error('socket.io no longer keeps its namespaces in Server#_nsps (see src/internals/socket-io.internals.ts)');
  }
  return [...nsps.values()];
}

/** The members of a socket {@link emitJsonWithAck} uses: those `Socket#emit` uses for an event with an ack. */
interface AckingSocket {
  nsp: { name: string; _ids: number };
  flags: { timeout?: number };
  registerAckCallback(id: number, ack: (err: Error | null) => void): void;
  client: { _packet(encoded: string[], opts: { preEncoded: boolean; compress: boolean }): void };
}

/**
 * `socket.timeout(timeoutMs).emit(event, value, ack)` for a value given as its JSON: the frame is
 * the one Socket.IO's encoder writes for that emit (`2<namespace>,<ack id>[<event>,<value>]`), so
 * the value is not parsed and serialized again on its way through (a relayed message's bytes,
 * copied twice on the V8 heap). The ack id and its timeout are the socket's own: `ack` gets null on
 * the peer's ack and an error when the timeout passes first, as with `emit`.
 */
export function emitJsonWithAck(socket: Socket, event: string, json: string, timeoutMs: number, ack: (err: Error | null) => void): void {
  const s = socket as unknown as AckingSocket;
  if (typeof s.nsp._ids !== 'number' || typeof s.registerAckCallback !== 'function' || typeof s.client._packet !== 'function') {
    throw new Error(
      'socket.io no longer emits with Socket#registerAckCallback, Namespace#_ids and Client#_packet (see src/internals/socket-io.internals.ts)',
    );
  }
  const id = s.nsp._ids++;
  const flags = s.flags;
  s.flags = { timeout: timeoutMs };
  s.registerAckCallback(id, ack);
  s.flags = flags;
  const nsp = s.nsp.name === '/' ? '' : `${s.nsp.name},`;
  s.client._packet([`2${nsp}${id}[${JSON.stringify(event)},${json}]`], { preEncoded: true, compress: true });
}
