import type { Cluster, Redis } from 'ioredis';

/**
 * A connection to one Redis server (direct or found through Sentinel) or to a Redis Cluster. The
 * stores run on either: every key one script, transaction or multi-key command touches carries
 * the same hash tag (`{…}`), so on a Cluster they all live in one slot.
 */
export type RedisClient = Redis | Cluster;

/**
 * `{tag}`: the part of a key Redis Cluster hashes to pick the slot. Braces and `%` in `tag` are
 * percent-encoded, so the tag cannot end early and distinct tags stay distinct keys.
 */
export function hashTag(tag: string): string {
  return `{${tag.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}}`;
}
