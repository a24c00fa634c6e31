import type { Server } from 'socket.io';
import type { WebSocket } from 'ws';

/**
 * Two private members of Engine.IO the hub reads, named nowhere else and checked by
 * test/integration/internals/engine-io.internals.test.ts:
 * - `Server#clients`, its open connections by id (protected in its typings, documented in its
 *   README): at shutdown the hub closes transports (not Socket.IO sockets) in batches;
 * - `WebSocket#socket` of its websocket transport, the `ws` connection under it: the send-buffer
 *   bound (src/net/send-buffers.ts) reads its `bufferedAmount` and terminates it.
 */
export const ENGINE_IO_CHECKED = { package: 'engine.io', versions: ['6.6.12'] } as const;

/** An Engine.IO connection, as far as the hub uses one. */
export interface EngineConnection {
  close(): void;
}

/** Every open Engine.IO connection of `io`, whether or not it joined a namespace yet. */
export function engineConnections(io: Server): EngineConnection[] {
  const clients = (io.engine as unknown as { clients?: Record<string, EngineConnection> }).clients;
  if (clients === undefined || typeof clients !== 'object') {
    throw new Error('engine.io no longer keeps its connections in Server#clients (see src/internals/engine-io.internals.ts)');
  }
  return Object.values(clients);
}

/**
 * The `ws` connection under a websocket transport of Engine.IO, or null for any other transport
 * (polling) and when Engine.IO no longer keeps it where it did.
 */
export function transportWebSocket(transport: { readonly name: string }): WebSocket | null {
  if (transport.name !== 'websocket') return null;
  // Not `instanceof`: Engine.IO's own copy of `ws` may differ from the hub's (its wsEngine).
  const socket = (transport as unknown as { socket?: Partial<WebSocket> }).socket;
  return typeof socket?.bufferedAmount === 'number' && typeof socket.terminate === 'function' ? (socket as WebSocket) : null;
}
