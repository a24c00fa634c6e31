import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { LimiterFactory, LimiterOptions } from '../../limits/limiter-factory';

/** Limiters of the single in-memory replica. */
export class MemoryLimiterFactory implements LimiterFactory {
  create(options: LimiterOptions): RateLimiterMemory {
    return new RateLimiterMemory({ keyPrefix: options.name, points: options.points, duration: options.durationS });
  }
}
