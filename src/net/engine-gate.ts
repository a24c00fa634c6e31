import type { IncomingMessage } from 'node:http';
import type { Server } from 'socket.io';
import type { ClientIpResolver } from './client-ip';
import type { HubMetrics } from '../metrics/metrics';
import type { ConnectionInfoRegistry } from './connection-info';

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
 * Refuses connections before the Socket.IO handshake (and before the websocket upgrade): while
 * draining, and beyond the per-replica and per-IP connection limits. Such refusals carry no code;
 * the SDKs retry them with backoff, and behind a load balancer the retry lands on another replica.
 * Installs the connection registry first: the gate counts connections by the address it records.
 */
export function installEngineGate(io: Server, options: EngineGateOptions): void {
  options.connections.install(io, options.clientIp);
  const perIp = new Map<string, number>();
  let total = 0;

  io.engine.opts.allowRequest = (req: IncomingMessage, callback: (err: string | null | undefined, ok: boolean) => void) => {
    const refuse = (reason: string) => {
      options.metrics.engineRefusals.inc({ reason });
      callback(reason, false);
    };
    if (options.isDraining()) return refuse('draining');
    if (options.maxConnections > 0 && total >= options.maxConnections) return refuse('replica connection limit');
    const ip = options.clientIp(req);
    if (options.maxConnectionsPerIp > 0 && (perIp.get(ip) ?? 0) >= options.maxConnectionsPerIp) {
      return refuse('per-address connection limit');
    }
    callback(null, true);
  };

  const release = (ip: string) => {
    total--;
    const left = (perIp.get(ip) ?? 1) - 1;
    if (left === 0) perIp.delete(ip);
    else perIp.set(ip, left);
  };

  io.engine.on('connection', (conn: GatedConnection) => {
    const { ip } = options.connections.ofConnection(conn);
    total++;
    perIp.set(ip, (perIp.get(ip) ?? 0) + 1);
    // `on`, not `once`: engine.io emits `close` once, and `once` would add a wrapper per connection.
    conn.on('close', () => release(ip));
  });
}
