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

  /**
   * {@link markDelivered}, then publishes `payload` on `channel`: two plain commands on one
   * connection, sent together and run in that order, so whoever receives `payload` finds the record
   * marked. The publish goes out even when Redis refuses the write (out of memory, a replica after a
   * failover): the runtime has the message whatever the record says. Rejects with the publish's
   * error, else with a {@link DeliveryMarkError} when only the write failed. Not a script: one that
   * does both costs Redis about three times the instructions (`npm run bench:redis-scripts`).
   */
  async markDeliveredThenPublish(key: DedupeKey, record: DedupeRecord, ttlS: number, channel: string, payload: string): Promise<void> {
    const [marked, published] = await Promise.allSettled([this.markDelivered(key, record, ttlS), this.redis.spublish(channel, payload)]);
    if (published.status === 'rejected') throw published.reason;
    if (marked.status === 'rejected') throw new DeliveryMarkError(marked.reason);
  }

  /** The sub's length goes first, so no two keys share a name whatever characters sub holds. */
  key({ agentId, sub, clientMessageId }: DedupeKey): string {
    return `${this.prefix}${hashTag(agentId)}:dedupe:${sub.length}:${sub}:${clientMessageId}`;
  }
}

/** The delivered mark of {@link RedisDedupeStore.markDeliveredThenPublish} failed; its publish went out. */
export class DeliveryMarkError extends Error {
  constructor(cause: unknown) {
    super('the delivered record could not be written', { cause });
    this.name = 'DeliveryMarkError';
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
