import type { ThrottledLog } from '../logging/throttled-log';
import type { HubMetrics } from '../metrics/metrics';
import { MemoryCounterStore } from '../store/memory/memory-counter.store';
import type { CounterStore } from '../store/store';
import { HandshakeError } from './handshake';

/** Length of the counting window; also the `Retry-After` a limited REST caller is given. */
export const FAILURE_WINDOW_S = 60;

/**
 * Limits failed authentications per client IP per minute: refused handshakes on both namespaces
 * and REST requests answered 401 count against one budget, so guessing keys or tokens through
 * either door uses it up for both. Counts are shared through the store (Redis in a cluster) and
 * mirrored locally, so a store outage degrades to a per-replica limit, logged and counted,
 * instead of failing open.
 */
export class AuthFailureLimiter {
  private readonly local = new MemoryCounterStore();

  constructor(
    /** Null for the single in-memory replica, where the local counts are the only counts. */
    private readonly shared: CounterStore | null,
    private readonly limitPerMinute: number,
    private readonly log: ThrottledLog,
    private readonly metrics: HubMetrics,
  ) {}

  /** Throws RATE_LIMITED when `ip` has used up its failures for this minute. */
  async check(ip: string): Promise<void> {
    if (await this.isLimited(ip)) throw new HandshakeError('RATE_LIMITED');
  }

  /** Whether `ip` has used up its failures for this minute. */
  async isLimited(ip: string): Promise<boolean> {
    if (this.limitPerMinute === 0) return false;
    const key = failureKey(ip);
    const shared = this.shared;
    const [sharedCount, local] = await Promise.all([
      shared ? this.sharedCount(() => shared.get(key)) : 0,
      this.local.get(key),
    ]);
    return Math.max(sharedCount, local) >= this.limitPerMinute;
  }

  /**
   * Counts a failure of `ip`. Resolves true when this failure went past the limit: the caller then
   * answers RATE_LIMITED instead of the failure's own code, so however many attempts race the
   * check above, an address gets at most `limitPerMinute` verdicts on its credentials per window
   * (counts are incremented atomically, cluster-wide with a shared store).
   */
  async recordFailure(ip: string): Promise<boolean> {
    if (this.limitPerMinute === 0) return false;
    const key = failureKey(ip);
    const shared = this.shared;
    const [sharedCount, local] = await Promise.all([
      shared ? this.sharedCount(() => shared.increment(key, FAILURE_WINDOW_S)) : 0,
      this.local.increment(key, FAILURE_WINDOW_S),
    ]);
    return Math.max(sharedCount, local) > this.limitPerMinute;
  }

  close(): void {
    this.local.counters.close();
  }

  private async sharedCount(op: () => Promise<number>): Promise<number> {
    try {
      return await op();
    } catch (err) {
      this.metrics.redisErrors.inc({ component: 'auth-failure-limiter' });
      this.log.warn('auth-failure-limiter', err, 'shared auth-failure counter unavailable; limiting per replica');
      return 0;
    }
  }
}

function failureKey(ip: string): string {
  return `auth-failures:${ip}`;
}
