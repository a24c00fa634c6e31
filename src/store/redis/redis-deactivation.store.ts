import type { RedisClient } from './redis-client';
import type { DeactivationStore } from '../store';

/** One set of deactivated subjects; it outlives user records, as deactivations must. */
export class RedisDeactivationStore implements DeactivationStore {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.key = `${prefix}deactivated`;
  }

  async isDeactivated(sub: string): Promise<boolean> {
    return (await this.redis.sismember(this.key, sub)) === 1;
  }

  async deactivatedAmong(subs: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    // Batches bound the size of one command (and of one reply) whatever the replica holds.
    for (let i = 0; i < subs.length; i += 1000) {
      const batch = subs.slice(i, i + 1000);
      const members = await this.redis.smismember(this.key, ...batch);
      batch.forEach((sub, j) => members[j] === 1 && found.add(sub));
    }
    return found;
  }

  async deactivate(sub: string): Promise<void> {
    await this.redis.sadd(this.key, sub);
  }

  async activate(sub: string): Promise<void> {
    await this.redis.srem(this.key, sub);
  }
}
