import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisClient } from './redis-client';
import { QUOTA_ENTRY_OVERHEAD, QUOTA_STREAM_OVERHEAD } from '../bot-quota';

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

/** Where the scripts live: `lua/<part>/<name>.lua`, shared functions in `lua/lib/` (copied to dist/ by the build). */
const LUA_DIR = join(__dirname, 'lua');

/** The numbers scripts take from TypeScript, written `{{NAME}}` in a `.lua` file. */
const CONSTANTS: Record<string, number> = { QUOTA_ENTRY_OVERHEAD, QUOTA_STREAM_OVERHEAD };

/**
 * The script `lua/<name>.lua`, read once when its module loads (docs/architecture.md, "Lua scripts").
 * A line `--#include <lib>` stands for `lua/lib/<lib>.lua` (shared functions: no script assembles
 * Lua from strings in TypeScript); `{{NAME}}` for one of {@link CONSTANTS}.
 */
export function luaScript(name: string): LuaScript {
  return new LuaScript(luaSource(name));
}

/** The text of `lua/<name>.lua` with its includes and constants filled in. */
export function luaSource(name: string): string {
  return readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8')
    .replace(/^--#include (\S+)$/gm, (_, lib: string) => luaSource(`lib/${lib}`).trimEnd())
    .replace(/\{\{(\w+)\}\}/g, (_, constant: string) => {
      const value = CONSTANTS[constant];
      if (value === undefined) throw new Error(`lua/${name}.lua: unknown constant ${constant}`);
      return String(value);
    });
}
