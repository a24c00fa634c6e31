import type { HubMetrics } from '../metrics/metrics';
import { ConnectionCounts, type LimitRefusal } from './connection-counts';

export interface SocketGateOptions {
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** CONNECT_TIMEOUT_MS: how long a connection may stay open with no namespace. */
  connectTimeoutMs: number;
  metrics: HubMetrics;
}

/** What {@link SocketGate.leftNamespace} needs of a Socket.IO socket that ended. */
export interface EndedSocket {
  /** Socket.IO's client: the sockets of every namespace still on the connection. */
  readonly client: unknown;
  readonly conn: { readonly readyState: string; close(): void };
}

/**
 * MAX_CONNECTIONS and MAX_CONNECTIONS_PER_IP for namespace sockets. One engine connection carries
 * any number of CONNECT packets, each a socket with its own session, so the engine gate's count of
 * connections alone lets one peer hold thousands; this gate counts the sockets themselves, against
 * the same limits, and refuses the CONNECTs past them at the handshake.
 *
 * A socket takes its slot before its handshake checks run (they await the store), so CONNECTs that
 * arrive together in one write each see the ones before them. The handshake gives the slot back on
 * a refusal, the relay when the socket ends.
 */
export class SocketGate {
  private readonly counts: ConnectionCounts;
  /** Handshakes under way per engine connection; an entry only while there is one. */
  private readonly handshakes = new WeakMap<object, number>();

  constructor(private readonly options: SocketGateOptions) {
    this.counts = new ConnectionCounts(options.maxConnections, options.maxConnectionsPerIp);
  }

  /**
   * Takes a slot for a socket from `ip` whose handshake on `conn` begins, or returns why not (and
   * counts the refusal). Synchronous. Call {@link SocketGate.settled} once the handshake is decided.
   */
  admit(ip: string, conn: object): LimitRefusal | null {
    const refusal = this.counts.refusal(ip);
    if (refusal) {
      this.options.metrics.engineRefusals.inc({ reason: refusal });
      return refusal;
    }
    this.counts.add(ip);
    this.handshakes.set(conn, (this.handshakes.get(conn) ?? 0) + 1);
    return null;
  }

  /** A handshake admitted on `conn` was accepted or refused. */
  settled(conn: object): void {
    const left = (this.handshakes.get(conn) ?? 1) - 1;
    if (left === 0) this.handshakes.delete(conn);
    else this.handshakes.set(conn, left);
  }

  /** True while a handshake admitted on `conn` is still running its checks. */
  handshaking(conn: object): boolean {
    return this.handshakes.has(conn);
  }

  /** Gives back the slot of a socket from `ip` that was refused later or ended. */
  release(ip: string): void {
    this.counts.remove(ip);
  }

  /** Sockets holding a slot, from `ip` or in all. */
  held(ip?: string): number {
    return this.counts.held(ip);
  }

  /**
   * After a socket ended while its connection stays open (its namespace was left, by the peer or
   * by the hub): when no namespace is left on the connection CONNECT_TIMEOUT_MS later, closes it,
   * as Socket.IO closes a new connection that joins none. A peer cannot park a connection, and the
   * engine gate's slot with it, by joining and leaving.
   */
  leftNamespace(socket: EndedSocket): void {
    const { conn } = socket;
    const client = socket.client as { sockets: Map<string, unknown> };
    if (conn.readyState !== 'open' || client.sockets.size > 0) return;
    setTimeout(() => {
      if (conn.readyState === 'open' && client.sockets.size === 0) conn.close();
    }, this.options.connectTimeoutMs).unref();
  }
}
