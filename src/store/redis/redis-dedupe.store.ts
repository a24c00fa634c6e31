import { hashTag, type RedisClient } from './redis-client';
import type { DedupeKey, DedupeRecord, DedupeStore } from '../store';
import { LuaScript } from './lua-script';

// KEYS: the record. ARGV: the delivered record's json, its ttl seconds, a shard channel, what to
// publish there when the record was written, what when it could not be (the publish happens either
// way: the runtime has the message whatever the record says).
const MARK_THEN_PUBLISH = new LuaScript(`
local written = redis.pcall('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
if type(written) == 'table' and written.err then return redis.call('SPUBLISH', ARGV[3], ARGV[5]) end
return redis.call('SPUBLISH', ARGV[3], ARGV[4])`);

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

  async markDelivered(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<void> {
    await this.redis.set(this.key(key), deliveredJson(record), 'EX', dedupeSeconds(ttlS));
  }

  /**
   * {@link markDelivered}, then publishes `marked` on `channel` in the same script, or `unmarked`
   * when the record could not be written. Only for a channel on the record's own server (not on a
   * Redis Cluster).
   */
  async markDeliveredThenPublish(
    key: DedupeKey,
    record: DedupeRecord,
    ttlS: number,
    channel: string,
    marked: string,
    unmarked: string,
  ): Promise<void> {
    await MARK_THEN_PUBLISH.run(this.redis, [this.key(key)], [deliveredJson(record), dedupeSeconds(ttlS), channel, marked, unmarked]);
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
