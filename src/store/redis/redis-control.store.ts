import {
  botRecord,
  type ControlCas,
  type ControlChange,
  type ControlRecord,
  type ControlStore,
  type ConversationRef,
} from '../control-store';
import { LuaScript } from './lua-script';
import { hashTag, type RedisClient } from './redis-client';

// KEYS: the record (a hash: `v` version, `r` the record's JSON), the bot's index of conversations
// handed off (clientId scored by the change's time). ARGV: expected version, the JSON to store,
// the new state, its time in ms, clientId, seconds a record handed back to the bot is kept.
// Returns { 1, version } when written, { 0, version, json|false } with the current record otherwise.
// The JSON is made in TypeScript; the script only compares versions and moves the index.
const COMPARE_AND_SET = new LuaScript(`local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) then return { 0, v, redis.call('HGET', KEYS[1], 'r') } end
v = v + 1
redis.call('HSET', KEYS[1], 'v', v, 'r', ARGV[2])
if ARGV[3] == 'bot' then
  redis.call('ZREM', KEYS[2], ARGV[5])
  redis.call('EXPIRE', KEYS[1], ARGV[6])
else
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
  redis.call('PERSIST', KEYS[1])
end
return { 1, v }`);

/**
 * Lua: the control state of a conversation from its record key (see {@link controlKey}), for the
 * scripts that must act on it in their own round trip (the intake, a reply's append, a stream's
 * open): `'bot'` and nil when there is no record, else its state and its JSON.
 */
export const LUA_CONTROL = `
local function control_of(key)
  local r = redis.call('HGET', key, 'r')
  if not r then return 'bot', nil end
  return cjson.decode(r).state, r
end`;

/** A conversation's control record key, in the bot's hash slot; the clientId's length goes first, so no two keys share a name. */
export function controlKey(prefix: string, agentId: string, clientId: string): string {
  return `${prefix}${hashTag(agentId)}:control:${clientId.length}:${clientId}`;
}

/** The record a script returned beside a refusal ({@link LUA_CONTROL}'s JSON). */
export function controlRecordOf(agentId: string, clientId: string, json: string): ControlRecord {
  return parse(agentId, clientId, null, json);
}

/** How long a record handed back to the bot keeps its version, in seconds (a stale compare-and-set fails meanwhile). */
const BOT_RECORD_TTL_S = 86_400;

/**
 * Control records in the bot's hash slot (`{<agentId>}`): one hash per conversation and one sorted
 * set per bot of the conversations handed off, changed together by one script. Held conversations
 * are also indexed, apart from the bot's keys, in one sorted set by their last operator message for
 * the idle hand-back; that index is a hint (docs/handoff.md): the sweep re-checks each record.
 */
export class RedisControlStore implements ControlStore {
  private readonly idleKey: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    this.idleKey = `${prefix}control:idle`;
  }

  async get(agentId: string, clientId: string): Promise<ControlRecord> {
    const [v, json] = await this.redis.hmget(this.recordKey(agentId, clientId), 'v', 'r');
    return parse(agentId, clientId, v, json);
  }

  async compareAndSet(agentId: string, clientId: string, expectedVersion: number, next: ControlChange): Promise<ControlCas> {
    const json = JSON.stringify(next);
    const sinceMs = next.since === null ? Date.now() : Date.parse(next.since);
    const [written, version, current] = await COMPARE_AND_SET.run<[number, number, string | null]>(
      this.redis,
      [this.recordKey(agentId, clientId), this.indexKey(agentId)],
      [expectedVersion, json, next.state, sinceMs, clientId, BOT_RECORD_TTL_S],
    );
    if (written !== 1) return { ok: false, current: parse(agentId, clientId, String(version), current ?? null) };
    const record: ControlRecord = { ...next, agentId, clientId, version };
    const member = JSON.stringify([agentId, clientId]);
    // Apart from the script: the idle index lives in its own slot on a Cluster.
    if (next.state === 'human' && next.lastOperatorAt !== undefined) {
      await this.redis.zadd(this.idleKey, Date.parse(next.lastOperatorAt), member);
    } else await this.redis.zrem(this.idleKey, member);
    return { ok: true, record };
  }

  async listHandedOff(agentId: string): Promise<ControlRecord[]> {
    const clientIds = await this.redis.zrange(this.indexKey(agentId), 0, -1);
    const records = await Promise.all(clientIds.map((clientId) => this.get(agentId, clientId)));
    return records.filter((r) => r.state !== 'bot');
  }

  async idleSince(beforeMs: number, limit: number): Promise<ConversationRef[]> {
    const members = await this.redis.zrangebyscore(this.idleKey, '-inf', beforeMs, 'LIMIT', 0, limit);
    return members.map((m) => {
      const [agentId, clientId] = JSON.parse(m) as [string, string];
      return { agentId, clientId };
    });
  }

  async dropIdle({ agentId, clientId }: ConversationRef): Promise<void> {
    await this.redis.zrem(this.idleKey, JSON.stringify([agentId, clientId]));
  }

  private recordKey(agentId: string, clientId: string): string {
    return controlKey(this.prefix, agentId, clientId);
  }

  private indexKey(agentId: string): string {
    return `${this.prefix}${hashTag(agentId)}:controls`;
  }
}

function parse(agentId: string, clientId: string, v: string | null, json: string | null): ControlRecord {
  const version = v === null ? 0 : Number(v);
  if (json === null) return botRecord(agentId, clientId, version);
  return { ...(JSON.parse(json) as ControlChange), agentId, clientId, version };
}
