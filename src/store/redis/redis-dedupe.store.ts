import { hashTag, type RedisClient } from './redis-client';
import type { DedupeKey, DedupeRecord, DedupeStore } from '../store';

/**
 * Dedupe records as plain keys with EX; the claim is one `SET NX GET` (Redis ≥ 7.0), so atomic.
 * A record's key carries its bot's hash tag, so the intake script claims it in the slot of the
 * bot's presence and log (Redis Cluster).
 */
export class RedisDedupeStore implements DedupeStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async claim(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<DedupeRecord | null> {
    const existing = (await this.redis.call('SET', this.key(key), JSON.stringify(record), 'EX', dedupeSeconds(ttlS), 'NX', 'GET')) as
      string | null;
    return existing === null ? null : (JSON.parse(existing) as DedupeRecord);
  }

  async find(key: DedupeKey): Promise<DedupeRecord | null> {
    const json = await this.redis.get(this.key(key));
    return json === null ? null : (JSON.parse(json) as DedupeRecord);
  }

  async markDelivered(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<void> {
    await this.redis.set(this.key(key), deliveredJson(record), 'EX', dedupeSeconds(ttlS));
  }

  /** The sub's length goes first, so no two keys share a name whatever characters sub holds. */
  key({ agentId, sub, clientMessageId }: DedupeKey): string {
    return `${this.prefix}${hashTag(agentId)}:dedupe:${sub.length}:${sub}:${clientMessageId}`;
  }
}

/** `record` as stored once its message was delivered. */
function deliveredJson(record: DedupeRecord): string {
  return JSON.stringify({ ...record, delivered: true });
}

/** A record's TTL in whole seconds, at least one (EX takes no fractions). */
export function dedupeSeconds(ttlS: number): number {
  return Math.max(1, Math.ceil(ttlS));
}
