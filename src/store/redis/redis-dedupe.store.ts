import type { RedisClient } from './redis-client';
import type { DedupeRecord, DedupeStore } from '../store';

/** Dedupe records as plain keys with EX; the claim is one `SET NX GET` (Redis ≥ 7.0), so atomic. */
export class RedisDedupeStore implements DedupeStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async claim(key: string, record: DedupeRecord, ttlS: number): Promise<DedupeRecord | null> {
    const existing = (await this.redis.call('SET', this.key(key), JSON.stringify(record), 'EX', seconds(ttlS), 'NX', 'GET')) as
      string | null;
    return existing === null ? null : (JSON.parse(existing) as DedupeRecord);
  }

  async markDelivered(key: string, record: DedupeRecord, ttlS: number): Promise<void> {
    await this.redis.set(this.key(key), JSON.stringify({ ...record, delivered: true }), 'EX', seconds(ttlS));
  }

  private key(key: string): string {
    return `${this.prefix}dedupe:${key}`;
  }
}

function seconds(ttlS: number): number {
  return Math.max(1, Math.ceil(ttlS));
}
