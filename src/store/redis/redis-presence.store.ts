import type Redis from 'ioredis';
import type { AgentPresence, PresenceStore, RuntimeEntry } from '../store';
import { LUA_NOW, LuaScript } from './lua-script';

/** A bot that went offline or came back online, found by {@link RedisPresenceStore.refresh}. */
export interface AgentStatusChange {
  agentId: string;
  online: boolean;
}

/** Sockets one replica holds for one bot, for {@link RedisPresenceStore.refresh}. */
export interface LiveEntries {
  agentId: string;
  runtimes: RuntimeEntry[];
  clients: RuntimeEntry[];
}

// Per bot two sorted sets (runtimes, clients) whose members are entries and whose scores are expiry
// times on the Redis clock, plus an index of bots scored by their latest expiry. Expired members are
// pruned by every write and skipped by every read, so a dead replica's entries vanish after the TTL.

const ADD = new LuaScript(`${LUA_NOW}
local exp = now + tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], exp, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], 'GT', exp, ARGV[3])
return redis.call('ZCARD', KEYS[1])`);

// KEYS: this set, the bot's other set, index. ARGV: member, agentId.
const REMOVE = new LuaScript(`${LUA_NOW}
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local n = redis.call('ZCARD', KEYS[1])
if n == 0 and redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') == 0 then redis.call('ZREM', KEYS[3], ARGV[2]) end
return n`);

const LIVE_MEMBERS = new LuaScript(`${LUA_NOW}
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')`);

const COUNTS = new LuaScript(`${LUA_NOW}
return { redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf'), redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') }`);

// KEYS: index. ARGV: key prefix. Standalone Redis only: bot keys are derived inside the script.
const LIST = new LuaScript(`${LUA_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local out = {}
for _, agentId in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local r = redis.call('ZCOUNT', ARGV[1] .. agentId .. ':runtimes', '(' .. now, '+inf')
  local c = redis.call('ZCOUNT', ARGV[1] .. agentId .. ':clients', '(' .. now, '+inf')
  if r + c > 0 then table.insert(out, agentId); table.insert(out, r); table.insert(out, c)
  else redis.call('ZREM', KEYS[1], agentId) end
end
return out`);

// KEYS: runtimes, clients, index. ARGV: ttlMs, agentId, runtime count, runtime members…, client members….
// Returns -1 when this call pruned the bot's last runtimes (their replica died or lost Redis for a
// TTL), 1 when its own runtimes brought the bot back from none, else 0. Pruning is atomic, so
// exactly one replica sees each transition, and it announces it.
const REFRESH = new LuaScript(`${LUA_NOW}
local ttl = tonumber(ARGV[1]); local exp = now + ttl; local nr = tonumber(ARGV[3])
local pruned = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local before = redis.call('ZCARD', KEYS[1])
for i = 4, #ARGV do
  local key = KEYS[2]; if i < 4 + nr then key = KEYS[1] end
  redis.call('ZADD', key, exp, ARGV[i])
end
for _, key in ipairs({ KEYS[1], KEYS[2] }) do
  if redis.call('EXISTS', key) == 1 then redis.call('PEXPIRE', key, ttl) end
end
redis.call('ZADD', KEYS[3], 'GT', exp, ARGV[2])
local after = redis.call('ZCARD', KEYS[1])
if before == 0 and after > 0 then return 1 end
if pruned > 0 and after == 0 then return -1 end
return 0`);

/** Cluster-wide presence with per-entry TTL, refreshed by the replica holding the socket. */
export class RedisPresenceStore implements PresenceStore {
  private readonly ttlMs: number;
  private readonly index: string;
  private readonly botPrefix: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    ttlS: number,
  ) {
    this.ttlMs = Math.max(1, ttlS) * 1000;
    this.index = `${prefix}presence:agents`;
    this.botPrefix = `${prefix}presence:bot:`;
  }

  addRuntime(agentId: string, entry: RuntimeEntry): Promise<number> {
    return ADD.run<number>(this.redis, [this.runtimes(agentId), this.index], [member(entry), this.ttlMs, agentId]);
  }

  removeRuntime(agentId: string, entry: RuntimeEntry): Promise<number> {
    return REMOVE.run<number>(this.redis, [this.runtimes(agentId), this.clients(agentId), this.index], [member(entry), agentId]);
  }

  async listRuntimes(agentId: string): Promise<RuntimeEntry[]> {
    return (await LIVE_MEMBERS.run<string[]>(this.redis, [this.runtimes(agentId)])).map(parseMember);
  }

  async addClient(agentId: string, entry: RuntimeEntry): Promise<void> {
    await ADD.run(this.redis, [this.clients(agentId), this.index], [member(entry), this.ttlMs, agentId]);
  }

  async removeClient(agentId: string, entry: RuntimeEntry): Promise<void> {
    await REMOVE.run(this.redis, [this.clients(agentId), this.runtimes(agentId), this.index], [member(entry), agentId]);
  }

  async listAgents(): Promise<AgentPresence[]> {
    const flat = await LIST.run<(string | number)[]>(this.redis, [this.index], [this.botPrefix]);
    const agents: AgentPresence[] = [];
    for (let i = 0; i < flat.length; i += 3) {
      agents.push({ agentId: String(flat[i]), runtimes: Number(flat[i + 1]), clients: Number(flat[i + 2]) });
    }
    return agents.sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
  }

  async getAgent(agentId: string): Promise<AgentPresence> {
    const [runtimes, clients] = await COUNTS.run<[number, number]>(this.redis, [this.runtimes(agentId), this.clients(agentId)]);
    return { agentId, runtimes: Number(runtimes), clients: Number(clients) };
  }

  /**
   * Re-adds this replica's live sockets with a fresh TTL: the periodic refresh, and the
   * re-registration after a Redis outage (or a restart of Redis without persistence). Resolves
   * with the bots this call took offline (their last runtimes had expired: a replica died or lost
   * Redis for a TTL) or back online (its own runtimes re-registered where none were left).
   */
  async refresh(live: LiveEntries[]): Promise<AgentStatusChange[]> {
    if (live.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const { agentId, runtimes, clients } of live) {
      const keys = [this.runtimes(agentId), this.clients(agentId), this.index];
      const args = [this.ttlMs, agentId, runtimes.length, ...runtimes.map(member), ...clients.map(member)];
      // EVAL in a pipeline: the script body is small and a NOSCRIPT fallback cannot run mid-pipeline.
      pipeline.eval(REFRESH.body, keys.length, ...keys, ...args);
    }
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
    const changes: AgentStatusChange[] = [];
    live.forEach(({ agentId }, i) => {
      const change = results[i]?.[1];
      if (change === 1 || change === -1) changes.push({ agentId, online: change === 1 });
    });
    return changes;
  }

  private runtimes(agentId: string): string {
    return `${this.botPrefix}${agentId}:runtimes`;
  }

  private clients(agentId: string): string {
    return `${this.botPrefix}${agentId}:clients`;
  }
}

function member(entry: RuntimeEntry): string {
  return JSON.stringify([entry.replicaId, entry.socketId]);
}

function parseMember(raw: string): RuntimeEntry {
  const [replicaId, socketId] = JSON.parse(raw) as [string, string];
  return { replicaId, socketId };
}
