import type Redis from 'ioredis';
import type { DeactivationStore } from '../store';

/** One set of deactivated subjects; it outlives user records, as deactivations must. */
export class RedisDeactivationStore implements DeactivationStore {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.key = `${prefix}deactivated`;
  }

  async isDeactivated(sub: string): Promise<boolean> {
    return (await this.redis.sismember(this.key, sub)) === 1;
  }

  async deactivate(sub: string): Promise<void> {
    await this.redis.sadd(this.key, sub);
  }

  async activate(sub: string): Promise<void> {
    await this.redis.srem(this.key, sub);
  }
}
