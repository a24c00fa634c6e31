import type { IncomingMessage } from 'node:http';
import type { Server } from 'socket.io';
import type { ClientIpResolver } from './client-ip';
import type { HubMetrics } from '../metrics/metrics';
import type { ConnectionInfoRegistry } from './connection-info';
import { ConnectionCounts } from './connection-counts';

export interface EngineGateOptions {
  maxConnections: number;
  maxConnectionsPerIp: number;
  clientIp: ClientIpResolver;
  connections: ConnectionInfoRegistry;
  metrics: HubMetrics;
  isDraining(): boolean;
}

interface GatedConnection {
  on(event: 'close', listener: () => void): void;
}

/**
 * Refuses engine connections before the Socket.IO handshake (and before the websocket upgrade):
 * while draining, and beyond the per-replica and per-IP connection limits. Such refusals carry no
 * code; the SDKs retry them with backoff, and behind a load balancer the retry lands on another
 * replica. The namespace sockets multiplexed on the connections are counted again, against the same
 * limits, by the socket gate (socket-gate.ts). Installs the connection registry first: the gate counts
 * connections by the address it records.
 */
export function installEngineGate(io: Server, options: EngineGateOptions): void {
  options.connections.install(io, options.clientIp);
  const counts = new ConnectionCounts(options.maxConnections, options.maxConnectionsPerIp);

  io.engine.opts.allowRequest = (req: IncomingMessage, callback: (err: string | null | undefined, ok: boolean) => void) => {
    const refuse = (reason: string) => {
      options.metrics.engineRefusals.inc({ reason });
      callback(reason, false);
    };
    if (options.isDraining()) return refuse('draining');
    const limited = counts.refusal(options.clientIp(req));
    if (limited) return refuse(limited);
    callback(null, true);
  };

  io.engine.on('connection', (conn: GatedConnection) => {
    const { ip } = options.connections.ofConnection(conn);
    counts.add(ip);
    // `on`, not `once`: engine.io emits `close` once, and `once` would add a wrapper per connection.
    conn.on('close', () => counts.remove(ip));
  });
}
