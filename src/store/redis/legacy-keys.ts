import type { RedisClient } from './redis-client';
import { hashTag } from './redis-client';

/**
 * Keys of the first release, before they carried hash tags for Redis Cluster, and their names
 * now. Users and API keys are the persistent ones; counters and deactivations kept their names,
 * and presence and dedupe records expire by themselves. Dedupe records moved under their bot's
 * hash tag (`{agentId}:dedupe:…`) and are not renamed: during a rolling upgrade a client's retry
 * of a message first sent through an older replica can be delivered a second time, with a new id.
 */
export function legacyKeyRenames(prefix: string): [from: string, to: string][] {
  const users = `${prefix}${hashTag('users')}`;
  const apiKeys = `${prefix}${hashTag('apikeys')}`;
  return [
    [`${prefix}users`, `${users}:records`],
    [`${prefix}users:email`, `${users}:email`],
    [`${prefix}users:order`, `${users}:order`],
    [`${prefix}apikeys`, `${apiKeys}:records`],
    [`${prefix}apikeys:hash`, `${apiKeys}:hash`],
    [`${prefix}apikeys:used`, `${apiKeys}:used`],
  ];
}

/**
 * Renames the first release's keys to their tagged names on one server (standalone or Sentinel;
 * a Cluster deployment starts with tagged keys). RENAMENX never overwrites a newer key, and a
 * missing old key is the normal case, so running it at every start is safe. Resolves with the
 * keys it renamed.
 */
export async function migrateLegacyKeys(redis: RedisClient, prefix: string): Promise<string[]> {
  const renamed: string[] = [];
  for (const [from, to] of legacyKeyRenames(prefix)) {
    if ((await redis.exists(from)) === 0) continue;
    if ((await redis.renamenx(from, to)) === 1) renamed.push(from);
  }
  return renamed;
}
