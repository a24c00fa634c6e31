import type { RateLimiterAbstract } from 'rate-limiter-flexible';

/** A fixed-window limiter of `points` per `durationS` seconds under its own key prefix. */
export interface LimiterOptions {
  name: string;
  points: number;
  durationS: number;
  /**
   * Told each time a shared limiter could not reach its store and answered from this replica's
   * own in-memory counts instead (rate-limiter-flexible's insurance limiter).
   */
  onFallback?: (err: unknown) => void;
}

/**
 * Builds rate-limiter-flexible limiters on a store (store/memory, store/redis): counts shared by every replica in Redis
 * (atomic consume), per replica in memory, and per replica again while Redis is unreachable.
 */
export interface LimiterFactory {
  create(options: LimiterOptions): RateLimiterAbstract;
}
