import type { RedisClient } from './redis-client';
import type { Intake, IntakeRequest, MessageIntake, DedupeRecord } from '../store';
import { LUA_NOW, LuaScript } from './lua-script';
import { LUA_APPEND, type RedisConversationLog } from './redis-conversation.log';
import { dedupeSeconds, type RedisDedupeStore } from './redis-dedupe.store';
import { parseRuntime, type RedisPresenceStore } from './redis-presence.store';

// KEYS: the dedupe record, the bot's runtimes, then append's stream, index and clock (all under the
// bot's hash tag: one slot). ARGV: record json, record ttl seconds, append's arguments with '' for
// the json when nothing is to be logged, a shard channel or ''. Returns { existing record json or
// '', runtime members, append's result or -1 when it did not run, the channel's subscribers or -1 }.
// (The channel is only given where it lives on the same server as the keys: not on a Cluster.)
const INTAKE = new LuaScript(`${LUA_NOW}${LUA_APPEND}
local existing = redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX', 'GET')
if existing and cjson.decode(existing).delivered then return { existing, {}, -1, -1 } end
local subscribers = -1
if ARGV[8] ~= '' then subscribers = redis.call('PUBSUB', 'SHARDNUMSUB', ARGV[8])[2] end
local runtimes = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')
if existing or #runtimes == 0 or ARGV[4] == '' then return { existing or '', runtimes, -1, subscribers } end
return { '', runtimes, append(KEYS[3], KEYS[4], KEYS[5], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]), subscribers }`);

/** {@link MessageIntake} as one script, so a client message costs one Redis command before delivery. */
export class RedisMessageIntake implements MessageIntake {
  constructor(
    private readonly redis: RedisClient,
    private readonly dedupe: RedisDedupeStore,
    private readonly presence: RedisPresenceStore,
    private readonly log: RedisConversationLog,
  ) {}

  async admit({ key, record, ttlS, clientId, message, subscribersOf }: IntakeRequest): Promise<Intake> {
    const { agentId } = key;
    const keys = [this.dedupe.key(key), this.presence.runtimes(agentId), ...this.log.appendKeys(agentId, clientId)];
    const append = message === null ? ['', '', 0, 0, 0] : this.log.appendArgs(clientId, message.id, JSON.stringify(message));
    const [found, members, appended, counted] = await INTAKE.run<[string, string[], number, number]>(this.redis, keys, [
      JSON.stringify(record),
      dedupeSeconds(ttlS),
      ...append,
      subscribersOf ?? '',
    ]);
    const existing = found === '' ? null : (JSON.parse(found) as DedupeRecord);
    const runtimes = members.map(parseRuntime);
    const subscribers = counted < 0 ? null : counted;
    if (appended < 0) return { existing, runtimes, logged: false, subscribers };
    await this.log.appended(agentId, clientId, appended);
    return { existing, runtimes, logged: true, subscribers };
  }
}
