import type { IncomingMessage } from 'node:http';
import type { Server } from 'socket.io';
import type { ClientIpResolver } from '../http/client-ip';
import type { HubMetrics } from '../metrics/metrics';

export interface EngineGateOptions {
  maxConnections: number;
  maxConnectionsPerIp: number;
  clientIp: ClientIpResolver;
  metrics: HubMetrics;
  isDraining(): boolean;
}

/**
 * Refuses connections before the Socket.IO handshake (and before the websocket upgrade): while
 * draining, and beyond the per-replica and per-IP connection limits. Such refusals carry no code;
 * the SDKs retry them with backoff, and behind a load balancer the retry lands on another replica.
 */
export function installEngineGate(io: Server, options: EngineGateOptions): void {
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

  io.engine.on('connection', (conn: { request: IncomingMessage; once(event: 'close', fn: () => void): void }) => {
    const ip = options.clientIp(conn.request);
    total++;
    perIp.set(ip, (perIp.get(ip) ?? 0) + 1);
    conn.once('close', () => {
      total--;
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left === 0) perIp.delete(ip);
      else perIp.set(ip, left);
    });
  });
}
