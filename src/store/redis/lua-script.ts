import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-client';

/**
 * A Lua script run with EVALSHA, falling back to EVAL once when the server does not know it yet
 * (after a restart or SCRIPT FLUSH), so the body crosses the wire once per server lifetime.
 */
export class LuaScript {
  private readonly sha: string;

  constructor(readonly body: string) {
    this.sha = createHash('sha1').update(body).digest('hex');
  }

  async run<T = unknown>(client: RedisClient, keys: string[], args: (string | number)[] = []): Promise<T> {
    try {
      return (await client.evalsha(this.sha, keys.length, ...keys, ...args)) as T;
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return (await client.eval(this.body, keys.length, ...keys, ...args)) as T;
    }
  }
}

/** Lua prologue: `now` in milliseconds from the Redis clock, so replicas with skewed clocks agree. */
export const LUA_NOW = `local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
