import { cellTiming, type RateBudget } from '../../limits/rate-budgets';
import { hashTag, type RedisClient } from './redis-client';
import type { Intake, IntakeRequest, MessageIntake, DedupeRecord } from '../store';
import { LUA_NOW, LuaScript } from './lua-script';
import { LUA_APPEND, type RedisConversationLog } from './redis-conversation.log';
import { LUA_QUOTA } from './redis-quota';
import { dedupeSeconds, type RedisDedupeStore } from './redis-dedupe.store';
import { parseRuntime, type RedisPresenceStore } from './redis-presence.store';
import { controlKey, LUA_CONTROL } from './redis-control.store';
import type { ControlState } from '../../protocol';

// Lua: the rendezvous pick of relay/rendezvous.ts over runtime members (JSON [replicaId, socketId]):
// FNV-1a from the seed over the socket id's bytes (ASCII: its UTF-16 code units), then the murmur3
// finalizer. Lua numbers are doubles: a 32-bit product is built from 16-bit halves to stay exact.
// A bot's only runtime is picked without scoring; members are read by pattern where they hold no
// escapes (JSON.stringify of two plain ids), else decoded.
const LUA_RENDEZVOUS = `
local U32 = 4294967296
local function mul32(a, b)
  local lo = a % 65536
  return (lo * b + ((a - lo) / 65536 * b) % 65536 * 65536) % U32
end
local function xor32(a, b) return bit.bxor(a, b) % U32 end
local function score(seed, id)
  local h = seed
  for i = 1, #id do h = mul32(xor32(h, string.byte(id, i)), 16777619) end
  h = xor32(h, math.floor(h / 65536))
  h = mul32(h, 2246822507)
  h = xor32(h, math.floor(h / 8192))
  h = mul32(h, 3266489909)
  return xor32(h, math.floor(h / 65536))
end
local function runtime_of(member)
  local replica, socket = string.match(member, '^%["([^"\\\\]*)","([^"\\\\]*)"%]$')
  if replica then return replica, socket end
  local entry = cjson.decode(member)
  return entry[1], entry[2]
end
local function pick(members, seed)
  if #members == 1 then return 1, runtime_of(members[1]) end
  local best, best_score, best_replica, best_socket = 0, -1, nil, nil
  for i, member in ipairs(members) do
    local replica, socket = runtime_of(member)
    local s = score(seed, socket)
    if s > best_score then best, best_score, best_replica, best_socket = i, s, replica, socket end
  end
  return best, best_replica, best_socket
end`;

// The sender's budget (see limits/rate-budgets.ts): the key holds when the bucket is full again (ms,
// on the Redis clock), expiring then; a message passes while that is at most `tolerance` ms ahead.
const LUA_BUDGET = `
local function spend(key, interval, tolerance)
  local due = math.max(now, tonumber(redis.call('GET', key) or now))
  if due - now > tolerance then return false end
  due = due + interval
  redis.call('SET', key, tostring(due), 'PX', math.max(1, math.ceil(due - now)))
  return true
end`;

// KEYS: the dedupe record, the bot's runtimes, then append's stream, clock and marker, then the
// sender's budget, then the bot's quota's three, then the conversation's control record (all under
// the bot's hash tag: one slot). ARGV: record json, record ttl seconds, append's arguments with ''
// for the json when nothing is to be logged, a shard channel or '', the budget's interval and
// tolerance (ms) or '' twice, the quota's four, then the handoff or '': seed, this replica's id,
// channel before and after the replica id, request before and after the socket id, where in
// `after` the observed mark goes and the mark.
// Returns { existing record json or '', runtime members, append's result or -1 when it did not run,
// the channel's subscribers or -1, the handed-off runtime's index (1-based) or 0, its receivers or
// -1, 1 when the budget was spent (and nothing else done) or 0, 1 when the quota had no room for the
// message (its fresh claim undone, nothing logged or handed off) or 0, the clientIds of the
// conversations the quota dropped to make room, the control state }.
// (Channels are only given where they live on the same server as the keys: not on a Cluster. The
// request is published after the append: an append that fails aborts the script before it. A
// message is appended only with a fresh claim, so its id, stamped for it, is not in the log yet.)
const INTAKE = new LuaScript(`${LUA_NOW}${LUA_QUOTA}${LUA_APPEND}${LUA_RENDEZVOUS}${LUA_BUDGET}${LUA_CONTROL}
if ARGV[8] ~= '' and not spend(KEYS[6], tonumber(ARGV[8]), tonumber(ARGV[9])) then return { '', {}, -1, -1, 0, -1, 1, 0, {}, 'bot' } end
local control = control_of(KEYS[10])
local existing = redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX', 'GET')
if existing and cjson.decode(existing).delivered then return { existing, {}, -1, -1, 0, -1, 0, 0, {}, control } end
local subscribers = -1
if ARGV[7] ~= '' then subscribers = redis.call('PUBSUB', 'SHARDNUMSUB', ARGV[7])[2] end
local runtimes = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')
if existing or #runtimes == 0 then return { existing or '', runtimes, -1, subscribers, 0, -1, 0, 0, {}, control } end
local appended, evicted = -1, {}
if ARGV[4] ~= '' then
  local Q = quota_of(7, 10)
  if not q_reserve(Q, #ARGV[4] + #ARGV[3] + ENTRY_OVERHEAD, Q.member) then
    redis.call('DEL', KEYS[1])
    return { '', {}, -1, -1, 0, -1, 0, 1, Q.evicted, control }
  end
  appended = append(KEYS[3], KEYS[4], KEYS[5], ARGV[3], ARGV[4], ARGV[5], ARGV[6], nil, Q)
  evicted = Q.evicted
end
if ARGV[14] == '' then return { '', runtimes, appended, subscribers, 0, -1, 0, 0, evicted, control } end
local handed, replica, socket = pick(runtimes, tonumber(ARGV[14]))
if replica == ARGV[15] then return { '', runtimes, appended, subscribers, 0, -1, 0, 0, evicted, control } end
local after = ARGV[19]
if control == 'human' then
  local at = tonumber(ARGV[20])
  after = string.sub(after, 1, at) .. ARGV[21] .. string.sub(after, at + 1)
end
local receivers = redis.call('SPUBLISH', ARGV[16] .. replica .. ARGV[17], ARGV[18] .. cjson.encode(socket) .. after)
return { '', runtimes, appended, subscribers, handed, receivers, 0, 0, evicted, control }`);

/**
 * {@link MessageIntake} as one script, so a client message costs one Redis command before delivery,
 * and before its runtime's replica has it when a {@link Handoff} is given.
 */
export class RedisMessageIntake implements MessageIntake {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly dedupe: RedisDedupeStore,
    private readonly presence: RedisPresenceStore,
    private readonly log: RedisConversationLog,
  ) {}

  async admit({ key, record, ttlS, clientId, message, subscribersOf, handoff, budget }: IntakeRequest): Promise<Intake> {
    const { agentId, sub } = key;
    const keys = [
      this.dedupe.key(key),
      this.presence.runtimes(agentId),
      ...this.log.appendKeys(agentId, clientId),
      this.budgetKey(agentId, sub),
      ...this.log.quotaKeys(agentId),
      controlKey(this.prefix, agentId, clientId),
    ];
    const spending = budget ? budgetArgs(budget) : ['', ''];
    const append = message === null ? ['', '', 0, 0] : this.log.appendArgs(message.id, JSON.stringify(message));
    const handing =
      handoff === null
        ? ['']
        : [
            handoff.seed,
            handoff.replicaId,
            handoff.channel.before,
            handoff.channel.after,
            handoff.request.before,
            handoff.request.after,
            handoff.request.at,
            handoff.request.observed,
          ];
    const quota = this.log.quotaArgs(agentId, clientId);
    const [found, members, appended, counted, handed, receivers, limited, refused, evicted, control] = await INTAKE.run<
      [string, string[], number, number, number, number, number, number, string[], ControlState]
    >(this.redis, keys, [JSON.stringify(record), dedupeSeconds(ttlS), ...append, subscribersOf ?? '', ...spending, ...quota, ...handing]);
    if (limited === 1) return { limited: true, existing: null, runtimes: [], logged: false, subscribers: null, handedTo: null, control };
    this.log.evicted(agentId, evicted);
    if (refused === 1) return { quota: true, existing: null, runtimes: [], logged: false, subscribers: null, handedTo: null, control };
    const existing = found === '' ? null : (JSON.parse(found) as DedupeRecord);
    const runtimes = members.map(parseRuntime);
    const subscribers = counted < 0 ? null : counted;
    const handedTo = handed > 0 ? { runtime: runtimes[handed - 1], receivers } : null;
    if (appended < 0) return { existing, runtimes, logged: false, subscribers, handedTo, control };
    await this.log.appended(agentId, clientId, appended);
    return { existing, runtimes, logged: true, subscribers, handedTo, control };
  }

  /** The budget of `sub`'s messages to the bot: one key per pair, in the bot's slot like the intake's others. */
  budgetKey(agentId: string, sub: string): string {
    return `${this.prefix}${hashTag(agentId)}:budget:${sub.length}:${sub}`;
  }
}

/** The budget as the script reads it: milliseconds per message and how far ahead the bucket may run. */
function budgetArgs(budget: RateBudget): [number, number] {
  const { intervalMs, toleranceMs } = cellTiming(budget);
  return [intervalMs, toleranceMs];
}
