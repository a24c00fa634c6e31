import type { EventEmitter } from 'node:events';
import type { Server } from 'socket.io';
import type { WebSocket } from 'ws';

/**
 * The private parts of Engine.IO the hub reads or undoes, named nowhere else and checked by
 * test/integration/internals/engine-io.internals.test.ts:
 * - `Server#clients`, its open connections by id (protected in its typings, documented in its
 *   README): at shutdown the hub closes transports (not Socket.IO sockets) in batches;
 * - `WebSocket#socket` of its websocket transport, the `ws` connection under it: the send-buffer
 *   bound (src/net/send-buffers.ts) reads its `bufferedAmount` and terminates it;
 * - three listeners its websocket upgrade leaves on a connection for the connection's life, which
 *   nothing uses once it is open (see {@link upgradeResponseCloseListener} and
 *   {@link releaseUpgradeListeners}).
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

/** A listener as `rawListeners` gives it: a `once` listener is a wrapper holding the original. */
type RawListener = ((...args: unknown[]) => void) & { listener?: (...args: unknown[]) => void };

/** What the stand-in response re-emits its TCP socket's `close` with (engine.io 6.6, `WebSocketResponse`). */
const RESPONSE_CLOSE_SOURCE = '() => this.emit("close")';

/**
 * The `close` listener by which the stand-in response Engine.IO gives middlewares on a websocket
 * upgrade (`WebSocketResponse`) re-emits its TCP socket's `close`: it keeps the response, with its
 * own listeners, reachable from the socket for the connection's whole life. Found as the last
 * `close` listener of `res.socket`, so call this from the first Engine.IO middleware, before any
 * other adds one. Null when Engine.IO no longer adds it as it did.
 */
export function upgradeResponseCloseListener(res: object): { socket: EventEmitter; listener: RawListener } | null {
  const socket = (res as { socket?: Partial<EventEmitter> }).socket;
  if (typeof socket?.rawListeners !== 'function') return null;
  const listener = (socket as EventEmitter).rawListeners('close').at(-1) as RawListener | undefined;
  if (listener?.listener === undefined || String(listener.listener) !== RESPONSE_CLOSE_SOURCE) return null;
  return { socket: socket as EventEmitter, listener };
}

/**
 * Takes off a new websocket connection what Engine.IO's upgrade left on it: the no-op `error`
 * listener `onUpgradeError` on the `ws` connection (the transport's own listener handles errors
 * from then on; Engine.IO takes it off itself when a polling connection upgrades) and the
 * transport's `headers` listener, added by its handshake for every transport though only polling
 * emits `headers`. Does nothing for a polling connection.
 */
export function releaseUpgradeListeners(transport: { readonly name: string }): void {
  const ws = transportWebSocket(transport) as unknown as EventEmitter | null;
  if (!ws) return;
  for (const listener of ws.listeners('error') as RawListener[]) {
    if (listener.name === 'onUpgradeError') ws.removeListener('error', listener);
  }
  (transport as unknown as EventEmitter).removeAllListeners('headers');
}
