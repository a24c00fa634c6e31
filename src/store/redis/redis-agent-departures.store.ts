import { hashTag, type RedisClient } from './redis-client';
import type { AgentDepartures } from '../agent-departures';
import { luaScript } from './lua-script';

const CLEAR_IF = luaScript('departures/clear-if');

/** Departure marks as plain keys with PX, in the bot's hash slot (`{<agentId>}`). */
export class RedisAgentDepartures implements AgentDepartures {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async mark(agentId: string, mark: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.key(agentId), mark, 'PX', Math.max(1, Math.ceil(ttlMs)));
  }

  get(agentId: string): Promise<string | null> {
    return this.redis.get(this.key(agentId));
  }

  async clear(agentId: string, mark?: string): Promise<void> {
    if (mark === undefined) await this.redis.del(this.key(agentId));
    else await CLEAR_IF.run(this.redis, [this.key(agentId)], [mark]);
  }

  private key(agentId: string): string {
    return `${this.prefix}${hashTag(agentId)}:departed`;
  }
}
