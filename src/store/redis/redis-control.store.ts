import {
  botRecord,
  type ControlCas,
  type ControlChange,
  type ControlRecord,
  type ControlStore,
  type ConversationRef,
} from '../control-store';
import { luaScript } from './lua-script';
import { hashTag, type RedisClient } from './redis-client';

const COMPARE_AND_SET = luaScript('control/compare-and-set');

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
