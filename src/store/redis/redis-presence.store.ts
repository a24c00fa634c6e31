import { hashTag, type RedisClient } from './redis-client';
import type { AgentPresence, PresenceStore, RuntimeEntry } from '../store';
import { luaScript } from './lua-script';

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
// times on the Redis clock, under the bot's hash tag `{agentId}` so a script touching both shares a
// slot on a Cluster. Bots are indexed in INDEX_BUCKETS sorted sets (by a hash of the id, so no one
// slot takes every write) scored by their latest expiry; the index is written apart from the bot's
// keys, never relied on for counts, and pruned by score. Expired members are pruned by every write
// and skipped by every read, so a dead replica's entries vanish after the TTL.
const INDEX_BUCKETS = 16;

const ADD = luaScript('presence/add');

const REMOVE = luaScript('presence/remove');

const LIVE_MEMBERS = luaScript('presence/live-members');

const COUNTS = luaScript('presence/counts');

const LIVE_AGENTS = luaScript('presence/live-agents');

const REFRESH = luaScript('presence/refresh');

/** Cluster-wide presence with per-entry TTL, refreshed by the replica holding the socket. */
export class RedisPresenceStore implements PresenceStore {
  private readonly ttlMs: number;
  private readonly indexPrefix: string;
  private readonly botPrefix: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    ttlS: number,
  ) {
    this.ttlMs = Math.max(1, ttlS) * 1000;
    this.indexPrefix = `${prefix}presence:agents:`;
    this.botPrefix = `${prefix}presence:`;
  }

  async addRuntime(agentId: string, entry: RuntimeEntry): Promise<number> {
    const [count, expiry] = await ADD.run<[number, number]>(this.redis, [this.runtimes(agentId)], [member(entry), this.ttlMs]);
    await this.index(agentId, expiry);
    return count;
  }

  removeRuntime(agentId: string, entry: RuntimeEntry): Promise<number> {
    return REMOVE.run<number>(this.redis, [this.runtimes(agentId)], [member(entry)]);
  }

  async listRuntimes(agentId: string): Promise<RuntimeEntry[]> {
    return (await LIVE_MEMBERS.run<string[]>(this.redis, [this.runtimes(agentId)])).map(parseRuntime);
  }

  async addClient(agentId: string, entry: RuntimeEntry): Promise<void> {
    const [, expiry] = await ADD.run<[number, number]>(this.redis, [this.clients(agentId)], [member(entry), this.ttlMs]);
    await this.index(agentId, expiry);
  }

  async removeClient(agentId: string, entry: RuntimeEntry): Promise<void> {
    await REMOVE.run(this.redis, [this.clients(agentId)], [member(entry)]);
  }

  async listAgents(): Promise<AgentPresence[]> {
    const buckets = Array.from({ length: INDEX_BUCKETS }, (_, i) => LIVE_AGENTS.run<string[]>(this.redis, [this.bucket(i)]));
    const ids = [...new Set((await Promise.all(buckets)).flat())];
    const agents = (await Promise.all(ids.map((agentId) => this.getAgent(agentId)))).filter((a) => a.runtimes + a.clients > 0);
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
    // One script per bot (each bot's keys are in its own slot), sent without waiting in between.
    const results = await Promise.allSettled(
      live.map(async ({ agentId, runtimes, clients }) => {
        const args = [this.ttlMs, runtimes.length, ...runtimes.map(member), ...clients.map(member)];
        const [change, expiry] = await REFRESH.run<[number, number]>(this.redis, [this.runtimes(agentId), this.clients(agentId)], args);
        await this.index(agentId, expiry);
        return change;
      }),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const changes: AgentStatusChange[] = [];
    live.forEach(({ agentId }, i) => {
      const result = results[i];
      const change = result.status === 'fulfilled' ? result.value : 0;
      if (change === 1 || change === -1) changes.push({ agentId, online: change === 1 });
    });
    return changes;
  }

  private index(agentId: string, expiry: number): Promise<unknown> {
    return this.redis.zadd(this.bucket(bucketOf(agentId)), 'GT', expiry, agentId);
  }

  private bucket(i: number): string {
    return `${this.indexPrefix}${hashTag(`agents-${i}`)}`;
  }

  /** The bot's sorted set of runtimes (members as {@link parseRuntime} reads them, scored by expiry). */
  runtimes(agentId: string): string {
    return `${this.botPrefix}${hashTag(agentId)}:runtimes`;
  }

  private clients(agentId: string): string {
    return `${this.botPrefix}${hashTag(agentId)}:clients`;
  }
}

/** A stable bucket per bot id (FNV-1a), the same on every replica. */
function bucketOf(agentId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < agentId.length; i++) h = Math.imul(h ^ agentId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % INDEX_BUCKETS;
}

function member(entry: RuntimeEntry): string {
  return JSON.stringify([entry.replicaId, entry.socketId]);
}

/** A runtime from its member in the bot's sorted set. */
export function parseRuntime(raw: string): RuntimeEntry {
  const [replicaId, socketId] = JSON.parse(raw) as [string, string];
  return { replicaId, socketId };
}
