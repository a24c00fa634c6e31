import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import type { LimiterFactory, LimiterOptions } from '../../limits/limiter-factory';
import type { RedisClient } from './redis-client';

/**
 * Limiters whose counts live in Redis, so every replica spends one budget; consume is one Lua
 * script on one key (increment and expiry together, so it runs on a Cluster too), so concurrent
 * attempts on any replica are counted exactly.
 * While Redis is unreachable each replica counts on its own (the insurance limiter) instead of
 * failing open or waiting on the offline queue.
 */
export class RedisLimiterFactory implements LimiterFactory {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  create(options: LimiterOptions): RateLimiterRedis {
    const common = { keyPrefix: `${this.prefix}rl:${options.name}`, points: options.points, duration: options.durationS };
    return new RateLimiterRedis({
      ...common,
      storeClient: this.redis,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new InsuranceLimiter(common, options.onFallback),
    });
  }
}

/** The in-memory insurance limiter, telling its owner whenever it is used (Redis failed). */
class InsuranceLimiter extends RateLimiterMemory {
  constructor(
    options: { keyPrefix: string; points: number; duration: number },
    private readonly onFallback: ((err: unknown) => void) | undefined,
  ) {
    super(options);
  }

  override consume(key: string | number, points?: number, options?: Record<string, unknown>): Promise<RateLimiterRes> {
    this.onFallback?.(new Error('rate limiter store unreachable (consume)'));
    return super.consume(key, points, options);
  }

  override get(key: string | number, options?: Record<string, unknown>): Promise<RateLimiterRes | null> {
    this.onFallback?.(new Error('rate limiter store unreachable (get)'));
    return super.get(key, options);
  }
}
