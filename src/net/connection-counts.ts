/** Why a connection was refused by a count; the `reason` label of `relay_engine_refusals_total`. */
export type LimitRefusal = 'replica connection limit' | 'per-address connection limit';

/**
 * Connections held per client address and in all, against MAX_CONNECTIONS_PER_IP and
 * MAX_CONNECTIONS (0 = unlimited). The engine gate keeps one for engine connections, the socket
 * gate one for namespace sockets.
 */
export class ConnectionCounts {
  private readonly perIp = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly maxConnections: number,
    private readonly maxConnectionsPerIp: number,
  ) {}

  /** Why one more connection from `ip` would be over a limit, or null when it fits. */
  refusal(ip: string): LimitRefusal | null {
    if (this.maxConnections > 0 && this.total >= this.maxConnections) return 'replica connection limit';
    if (this.maxConnectionsPerIp > 0 && (this.perIp.get(ip) ?? 0) >= this.maxConnectionsPerIp) return 'per-address connection limit';
    return null;
  }

  add(ip: string): void {
    this.total++;
    this.perIp.set(ip, (this.perIp.get(ip) ?? 0) + 1);
  }

  remove(ip: string): void {
    this.total--;
    const left = (this.perIp.get(ip) ?? 1) - 1;
    if (left === 0) this.perIp.delete(ip);
    else this.perIp.set(ip, left);
  }

  /** Connections held from `ip` (all addresses without one). */
  held(ip?: string): number {
    return ip === undefined ? this.total : (this.perIp.get(ip) ?? 0);
  }
}
