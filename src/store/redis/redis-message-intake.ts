import type { RedisClient } from './redis-client';
import type { Intake, IntakeRequest, MessageIntake, DedupeRecord } from '../store';
import { LUA_NOW, LuaScript } from './lua-script';
import { LUA_APPEND, type RedisConversationLog } from './redis-conversation.log';
import { dedupeSeconds, type RedisDedupeStore } from './redis-dedupe.store';
import { parseRuntime, type RedisPresenceStore } from './redis-presence.store';

// KEYS: the dedupe record, the bot's runtimes, then append's stream, index and clock (all under the
// bot's hash tag: one slot). ARGV: record json, record ttl seconds, then append's arguments with ''
// for the json when nothing is to be logged. Returns { existing record json or '', runtime members,
// append's result or -1 when it did not run }.
const INTAKE = new LuaScript(`${LUA_NOW}${LUA_APPEND}
local existing = redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX', 'GET')
if existing and cjson.decode(existing).delivered then return { existing, {}, -1 } end
local runtimes = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')
if existing or #runtimes == 0 or ARGV[4] == '' then return { existing or '', runtimes, -1 } end
return { '', runtimes, append(KEYS[3], KEYS[4], KEYS[5], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]) }`);

/** {@link MessageIntake} as one script, so a client message costs one Redis command before delivery. */
export class RedisMessageIntake implements MessageIntake {
  constructor(
    private readonly redis: RedisClient,
    private readonly dedupe: RedisDedupeStore,
    private readonly presence: RedisPresenceStore,
    private readonly log: RedisConversationLog,
  ) {}

  async admit({ key, record, ttlS, clientId, message }: IntakeRequest): Promise<Intake> {
    const { agentId } = key;
    const keys = [this.dedupe.key(key), this.presence.runtimes(agentId), ...this.log.appendKeys(agentId, clientId)];
    const append = message === null ? ['', '', 0, 0, 0] : this.log.appendArgs(clientId, message);
    const [found, members, appended] = await INTAKE.run<[string, string[], number]>(this.redis, keys, [
      JSON.stringify(record),
      dedupeSeconds(ttlS),
      ...append,
    ]);
    const existing = found === '' ? null : (JSON.parse(found) as DedupeRecord);
    const runtimes = members.map(parseRuntime);
    if (appended < 0) return { existing, runtimes, logged: false };
    await this.log.appended(agentId, clientId, appended);
    return { existing, runtimes, logged: true };
  }
}
