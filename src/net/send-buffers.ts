import type { EventEmitter } from 'node:events';
import type { Server } from 'socket.io';
import type { WebSocket } from 'ws';
import { transportWebSocket } from '../internals/engine-io.internals';
import type { SendBufferLimit } from './websocket-engine';

/** The engine.io connection as far as this module touches it. */
export interface BufferedConnection {
  readonly transport: { readonly name: string };
  close(discard?: boolean): void;
}

/** A polling connection's events this module listens to. */
interface MeteredConnection extends BufferedConnection, Pick<EventEmitter, 'on' | 'off' | 'once'> {}

/**
 * MAX_SOCKET_BUFFER_BYTES: what the hub holds queued for one peer, and the closing of peers that
 * let it grow past the bound (a peer that stopped reading). The client reconnects and recovers what
 * it missed from the conversation log (docs/operations.md, slow consumers). An agent runtime has a
 * bound of its own, MAX_AGENT_SOCKET_BUFFER_BYTES: it takes the messages of all its bot's users, and
 * large ones from many users at once are a burst it reads, not a sign that it stopped reading.
 *
 * - websocket: the bytes the TCP socket has not handed to the kernel, this turn's corked writes
 *   included (`bufferedAmount`). Frames are reported sent once queued (websocket-engine.ts), so they
 *   pile up there and never in Engine.IO's write buffer. {@link boundedWebSocketServer} checks the
 *   backlog once a turn and calls {@link SendBuffers.overflowed}.
 * - polling: Engine.IO's write buffer, which grows while no GET is waiting; metered per packet (a
 *   rare transport: the SDKs use websocket only).
 *
 * One per hub; the relay asks {@link SendBuffers.closedSlow} when a socket ends, to log and count it.
 */
export class SendBuffers implements SendBufferLimit {
  /** Closed as slow consumers: websocket clients, or engine connections on polling. */
  private readonly slow = new WeakSet<object>();
  private readonly pollingBytes = new WeakMap<object, { bytes: number }>();
  /** Agent runtimes: engine connections and their websockets. */
  private readonly runtimes = new WeakSet<object>();
  /** The lowest bound any peer has (0: every peer unlimited): what the websocket engine checks against. */
  readonly checkAboveBytes: number;

  /**
   * @param maxBytes MAX_SOCKET_BUFFER_BYTES; 0 = unlimited.
   * @param runtimeMaxBytes MAX_AGENT_SOCKET_BUFFER_BYTES; 0 = unlimited.
   */
  constructor(
    readonly maxBytes: number,
    readonly runtimeMaxBytes: number = maxBytes,
  ) {
    const bounds = [maxBytes, runtimeMaxBytes].filter((bytes) => bytes > 0);
    this.checkAboveBytes = bounds.length === 0 ? 0 : Math.min(...bounds);
  }

  /** Meters the write buffer of every polling connection of `io` (until it upgrades). */
  install(io: Server): void {
    if (this.checkAboveBytes === 0) return;
    io.engine.on('connection', (conn: MeteredConnection) => {
      if (conn.transport.name === 'polling') this.meterPolling(conn);
    });
  }

  /** Gives the peer of `conn`, an agent runtime's, the runtime bound: on its websocket now or after an upgrade. */
  markRuntime(conn: BufferedConnection & Pick<EventEmitter, 'once'>): void {
    this.runtimes.add(conn);
    const socket = transportWebSocket(conn.transport);
    if (socket !== null) this.runtimes.add(socket);
    else
      conn.once('upgrade', () => {
        const upgraded = transportWebSocket(conn.transport);
        if (upgraded !== null) this.runtimes.add(upgraded);
      });
  }

  /** The bound of the peer of `conn` (or of a websocket), in bytes; 0 = unlimited. */
  boundOf(peer: object): number {
    return this.runtimes.has(peer) ? this.runtimeMaxBytes : this.maxBytes;
  }

  /**
   * Closes a websocket whose peer left more than its bound unread, at once and without a closing
   * handshake; one under its bound (a runtime's is higher) is left alone.
   */
  overflowed(client: WebSocket, queued: number): void {
    const bound = this.boundOf(client);
    if (bound > 0 && queued > bound) this.terminate(client);
  }

  /** Bytes queued for the peer of `conn` now. */
  queued(conn: BufferedConnection): number {
    const socket = transportWebSocket(conn.transport);
    if (socket !== null) return socket.bufferedAmount;
    return this.pollingBytes.get(conn)?.bytes ?? 0;
  }

  /** Bytes that may still be queued for the peer of `conn` (Infinity when unlimited; ≤ 0 past the bound). */
  room(conn: BufferedConnection): number {
    const bound = this.boundOf(conn);
    return bound === 0 ? Number.POSITIVE_INFINITY : bound - this.queued(conn);
  }

  /** Closes the transport of `conn` as a slow consumer. */
  close(conn: BufferedConnection): void {
    const socket = transportWebSocket(conn.transport);
    if (socket !== null) return this.terminate(socket);
    this.slow.add(conn);
    // Discarding: an orderly close would wait for the write buffer to drain, which it will not.
    conn.close(true);
  }

  /** True when the transport of `conn` was closed by this bound. */
  closedSlow(conn: BufferedConnection): boolean {
    const socket = transportWebSocket(conn.transport);
    return this.slow.has(conn) || (socket !== null && this.slow.has(socket));
  }

  private terminate(client: WebSocket): void {
    this.slow.add(client);
    // terminate, not close: a close frame would queue behind what the peer does not read, and the
    // buffers would live until the closing handshake times out.
    client.terminate();
  }

  private meterPolling(conn: MeteredConnection): void {
    const meter = { bytes: 0 };
    this.pollingBytes.set(conn, meter);
    const onPacket = ({ data }: { data?: unknown }) => {
      meter.bytes += typeof data === 'string' ? Buffer.byteLength(data) : Buffer.isBuffer(data) ? data.length : 0;
      const bound = this.boundOf(conn);
      if (bound === 0 || meter.bytes <= bound || this.slow.has(conn)) return;
      this.slow.add(conn);
      // Not inside Engine.IO's sendPacket, which goes on with the packet after this listener.
      process.nextTick(() => conn.close(true));
    };
    // A flush hands the whole write buffer to the waiting GET.
    const onFlush = () => {
      meter.bytes = 0;
    };
    conn.on('packetCreate', onPacket);
    conn.on('flush', onFlush);
    conn.once('upgrade', () => {
      conn.off('packetCreate', onPacket);
      conn.off('flush', onFlush);
      this.pollingBytes.delete(conn);
    });
  }
}
