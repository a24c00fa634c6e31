import { Cluster } from 'ioredis';
import { hashTag, type RedisClient } from './redis-client';
import {
  mergeSorted,
  type ConversationLog,
  type ConversationLogLimits,
  type HistoryPage,
  type LoggedMessage,
  type Publication,
  type Recovery,
} from '../conversation-log';
import type { ControlState, MessageFeedback } from '../../protocol';
import { ConversationHeldError } from '../control-store';
import { controlKey, controlRecordOf, LUA_CONTROL } from './redis-control.store';
import { decodeEntry, overlayIds, pageOf, replayOf, type LogEntry, type OverlayFields } from '../log-entries';
import { LuaScript } from './lua-script';
import { fill } from '../json-frames';
import { QuotaExceededError, quotaOf, type BotQuota } from '../bot-quota';
import { schemaDefaults } from '../../config/config';
import { LUA_QUOTA, RedisQuota } from './redis-quota';

// Layout. Per conversation a stream `<prefix>{<agentId>}:log:<clientId>` whose entries are
// `id <uuid> m <wire json>`; per bot one stream for broadcasts (`…:broadcasts`). The `{<agentId>}` hash
// tag puts every key of a bot in one slot, so each script below touches one slot (Redis Cluster).
//
// Stream ids are not derived from the UUIDv7: replicas' clocks differ, and XADD refuses an id at or
// below a stream's last one, so a reply from a replica whose clock is a few ms behind would fail to
// log. Nor are they `*`: each stream numbers its own entries within a millisecond, so a conversation
// and the broadcasts could not be merged in order. Instead one clock per bot (`…:clock`, the last id
// given out) hands out `<Redis ms>-<n>` ids that grow across all the bot's streams.
//
// An append is the hot path (every message, twice per round trip), so it keeps no index by message
// id, and its XADD trims approximately (`MAXLEN ~`): Redis then drops whole nodes of the stream
// (stream-node-max-entries / -bytes, a few to a hundred entries) once they fall past the limit,
// where an exact trim rewrites the oldest node on every append once the stream is full (measured:
// 7 % of Redis's instructions per relayed round trip). The log is the newest HISTORY_MAX_MESSAGES
// entries of a stream all the same: every read looks at those only, never at the few older ones a
// node still holds. The reads that look an id up (recovery, history pages, a retried append) search
// them from the newest entry, where the id they are given usually is, in chunks that grow fourfold up
// to 1,024.
//
// Per user a set `<prefix>{user:<clientId>}:conversations` of agentIds lets deleteUser find every
// conversation; it lives in another slot, so it is written and read by separate commands. It is
// refreshed (SADD, EXPIRE 2 × ttl) when a conversation starts and then at most every ttl / 2: a
// marker `…:logindexed:<clientId>` that expires after ttl / 2 says the refresh is not due yet, so it
// outlives the conversation without costing a command on every append.

// Lua: the stream id of message `id` among the newest `max` entries of any of `streams`, or false.
// Searches from the newest entries of all of them, in chunks of 16, 64, 256 and then 1,024 entries
// (a bound on what one call holds in the script's memory, whatever HISTORY_MAX_MESSAGES is).
export const LUA_FIND = `
local function find(id, streams, max, messages_only)
  local tops, seen, count = {}, {}, 16
  for i = 1, #streams do tops[i] = '+'; seen[i] = 0 end
  local searching = true
  while searching do
    searching = false
    for i, stream in ipairs(streams) do
      if tops[i] then
        local want = math.min(count, max - seen[i])
        local entries = redis.call('XREVRANGE', stream, tops[i], '-', 'COUNT', want)
        for _, e in ipairs(entries) do
          if e[2][2] == id and (not messages_only or e[2][1] == 'id') then return e[1] end
        end
        seen[i] = seen[i] + #entries
        tops[i] = #entries == want and seen[i] < max and '(' .. entries[#entries][1]
        searching = searching or tops[i] ~= false
      end
    end
    count = math.min(count * 4, 1024)
  end
  return false
end

-- The oldest entry of the newest max of a stream of length entries, or nil when it holds no more.
local function oldest_kept(stream, length, max)
  if length <= max then return nil end
  local oldest = redis.call('XRANGE', stream, '-', '+', 'COUNT', length - max + 1)
  return oldest[#oldest][1]
end`;

// Lua: appends a message to a stream, trimmed to about `max` entries (whole nodes; the reads keep to
// the newest `max`). Needs `now`, ms: Redis's clock in the intake, which reads it for presence
// anyway; the hub's clock in the appends below, which would otherwise spend a tenth of their
// instructions on TIME. Either is fine: the bot's clock orders the entries whatever a replica's
// clock says, and stream ids are only ever compared, never read as times. Arguments: stream, the
// bot's clock, the user-index marker (nil for broadcasts), message id, wire json, max entries, ttl
// seconds, the entry's first field name (nil: 'id'), and the bot's quota (LUA_QUOTA's Q), which
// counts the entry (the caller made room for it). Returns 2 when the caller must refresh the user's
// index of conversations, else 1.
export const LUA_APPEND = `
local function append(stream, clock, marker, id, json, max, ttl, field, Q)
  local ms, n = now, 0
  local last = redis.call('GET', clock)
  if last then
    local lm, ln = string.match(last, '(%d+)-(%d+)')
    lm = tonumber(lm)
    if lm >= ms then ms = lm; n = tonumber(ln) + 1 end
  end
  local sid = string.format('%d-%d', ms, n)
  redis.call('SET', clock, sid, 'EX', ttl)
  local before = redis.call('XLEN', stream)
  redis.call('XADD', stream, 'MAXLEN', '~', max, sid, field or 'id', id, 'm', json)
  redis.call('EXPIRE', stream, ttl)
  -- Only a stream past max entries may have been trimmed.
  local after = before + 1
  if after > tonumber(max) then after = redis.call('XLEN', stream) end
  q_appended(Q, #json + #id + ENTRY_OVERHEAD, before, after, ttl)
  if marker and redis.call('EXISTS', marker) == 0 then return 2 end
  return 1
end`;

// KEYS: stream, the bot's clock, the user-index marker (none for broadcasts), then the quota's three.
// ARGV: as append's after the keys, then '1' to first look for the id (a message logged before is not
// logged again) or '', then the hub's clock (ms), then the quota's four. Returns 0 when the id was
// found, -3 when the bot's quota has no room for the message (nothing written), else as append; with
// the conversations dropped to make room: { result, evicted clientIds }.
const APPEND = new LuaScript(`local now = tonumber(ARGV[6])${LUA_QUOTA}${LUA_FIND}${LUA_APPEND}
local Q = quota_of(#KEYS - 2, 7)
local marker = #KEYS == 6 and KEYS[3] or nil
if ARGV[5] == '1' and find(ARGV[1], { KEYS[1] }, tonumber(ARGV[3])) then return { 0, {} } end
if not q_reserve(Q, #ARGV[2] + #ARGV[1] + ENTRY_OVERHEAD, Q.member) then return { -3, {} } end
return { append(KEYS[1], KEYS[2], marker, ARGV[1], ARGV[2], ARGV[3], ARGV[4], nil, Q), Q.evicted }`);

// KEYS: as APPEND's. ARGV: as append's after the keys, then a shard channel and a payload, published
// only once the append succeeded (an error in append aborts the script before the publish), then the
// hub's clock (ms), then the quota's four. Returns { -3 (nothing written or published) or as append,
// evicted clientIds }.
const APPEND_THEN_PUBLISH = new LuaScript(`local now = tonumber(ARGV[7])${LUA_QUOTA}${LUA_APPEND}
local Q = quota_of(#KEYS - 2, 8)
if not q_reserve(Q, #ARGV[2] + #ARGV[1] + ENTRY_OVERHEAD, Q.member) then return { -3, {} } end
local appended = append(KEYS[1], KEYS[2], #KEYS == 6 and KEYS[3] or nil, ARGV[1], ARGV[2], ARGV[3], ARGV[4], nil, Q)
redis.call('SPUBLISH', ARGV[5], ARGV[6])
return { appended, Q.evicted }`);

// KEYS: as APPEND's with the marker, then the conversation's control record. ARGV: as
// APPEND_THEN_PUBLISH's, with '' for the channel when nothing is to be published. Returns { -4, {},
// the control record's json } when an operator holds the conversation (nothing written or
// published), else { -3 (nothing written or published) or as append, evicted clientIds, the state }.
const APPEND_REPLY = new LuaScript(`local now = tonumber(ARGV[7])${LUA_QUOTA}${LUA_APPEND}${LUA_CONTROL}
local control, record = control_of(KEYS[7])
if control == 'human' then return { -4, {}, record } end
local Q = quota_of(4, 8)
if not q_reserve(Q, #ARGV[2] + #ARGV[1] + ENTRY_OVERHEAD, Q.member) then return { -3, {}, control } end
local appended = append(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], nil, Q)
if ARGV[5] ~= '' then redis.call('SPUBLISH', ARGV[5], ARGV[6]) end
return { appended, Q.evicted, control }`);

// Lua prologue of the reads (after LUA_FIND): whether a stream lost (trimmed) an entry newer than
// stream id `sid`, the log keeping its newest `max`. Nothing is recorded per trimmed entry, so this
// is told from the stream itself: more than `max` entries were ever added to it (nothing is deleted
// but by trimming) and its oldest kept entry is newer than `sid`. The second holds when every kept
// entry came after `sid` and says nothing of the trimmed ones, which may all have been older: the
// answer errs to "lost", a recovery that could have been whole then reports unknown rather than
// replaying around a gap.
const LUA_TRIMMED_AFTER = `
local function newer(a, b)
  local am, as = string.match(a, '(%d+)-(%d+)'); local bm, bs = string.match(b, '(%d+)-(%d+)')
  am = tonumber(am); bm = tonumber(bm)
  return am > bm or (am == bm and tonumber(as) > tonumber(bs))
end
local function trimmed_after(stream, sid, max)
  if redis.call('EXISTS', stream) == 0 then return false end
  local info = redis.call('XINFO', 'STREAM', stream)
  local field = {}
  for i = 1, #info, 2 do field[info[i]] = info[i + 1] end
  if field['entries-added'] <= max then return false end
  return newer(oldest_kept(stream, field['length'], max) or field['recorded-first-entry-id'], sid)
end`;

// KEYS: stream, broadcasts. ARGV: after id (an end marker's position when the id names a streamed message that
// ended), max returned, the log's max entries.
// Returns -1 (unknown id, or a trimmed gap after it), else { conversation entries, broadcast entries }.
const READ_AFTER = new LuaScript(`${LUA_FIND}${LUA_TRIMMED_AFTER}
local kept = tonumber(ARGV[3])
local sid = find(ARGV[1], KEYS, kept)
if not sid then return -1 end
if trimmed_after(KEYS[1], sid, kept) or trimmed_after(KEYS[2], sid, kept) then return -1 end
local n = 2 * tonumber(ARGV[2]) + 2
return { redis.call('XRANGE', KEYS[1], '(' .. sid, '+', 'COUNT', n), redis.call('XRANGE', KEYS[2], '(' .. sid, '+', 'COUNT', n) }`);

/** Entries READ_AFTER returns at most per stream for `max` messages: a streamed message may take two (start, end marker). */
const afterCap = (max: number) => 2 * max + 2;

// KEYS: as READ_AFTER. ARGV: before id or '', limit, the log's max entries. Returns both streams'
// entries newest first.
const READ_BEFORE = new LuaScript(`${LUA_FIND}
local kept = tonumber(ARGV[3])
local top = '+'
if ARGV[1] ~= '' then
  local sid = find(ARGV[1], KEYS, kept, true)
  if not sid then return { {}, {} } end
  top = '(' .. sid
end
local n = tonumber(ARGV[2]) + 1
-- n entries that are messages (end markers are skipped: pages count messages).
local function page(stream)
  local bottom = oldest_kept(stream, redis.call('XLEN', stream), kept) or '-'
  local out, from = {}, top
  while #out < n do
    local chunk = redis.call('XREVRANGE', stream, from, bottom, 'COUNT', n)
    for _, e in ipairs(chunk) do
      if e[2][1] == 'id' and #out < n then out[#out + 1] = e end
    end
    if #chunk < n then break end
    from = '(' .. chunk[#chunk][1]
  end
  return out
end
return { page(KEYS[1]), page(KEYS[2]) }`);

// KEYS: conversation stream, overlay. ARGV: message id, the log's max entries, feedback json ('' withdraws it), ttl
// seconds. Returns 1 when the id is a bot message of the conversation (and the feedback was kept), else 0.
const SET_FEEDBACK = new LuaScript(`${LUA_FIND}
local sid = find(ARGV[1], { KEYS[1] }, tonumber(ARGV[2]), true)
if not sid then return 0 end
local fields = redis.call('XRANGE', KEYS[1], sid, sid)[1][2]
local entry = cjson.decode(fields[4])
local message = entry['stream'] or entry
if message['author'] ~= 'agent' then return 0 end
if ARGV[3] == '' then redis.call('HDEL', KEYS[2], 'r:' .. ARGV[1])
else redis.call('HSET', KEYS[2], 'r:' .. ARGV[1], ARGV[3]); redis.call('EXPIRE', KEYS[2], ARGV[4]) end
return 1`);

// KEYS: stream, overlay. ARGV: id, the log's max entries. Returns false (not a message of the conversation)
// or { entry json, final json or false }.
const FIND_MESSAGE = new LuaScript(`${LUA_FIND}
local sid = find(ARGV[1], { KEYS[1] }, tonumber(ARGV[2]), true)
if not sid then return false end
return { redis.call('XRANGE', KEYS[1], sid, sid)[1][2][4], redis.call('HGET', KEYS[2], 'f:' .. ARGV[1]) }`);

// KEYS: stream, overlay. ARGV: id, the log's max entries, the message's JSON, ttl s. Returns 1, or 0 when
// the id is not a bot message of the conversation.
const REPLACE_MESSAGE = new LuaScript(`${LUA_FIND}
local sid = find(ARGV[1], { KEYS[1] }, tonumber(ARGV[2]), true)
if not sid then return 0 end
local entry = cjson.decode(redis.call('XRANGE', KEYS[1], sid, sid)[1][2][4])
local message = entry['stream'] or entry
if message['author'] ~= 'agent' then return 0 end
redis.call('HSET', KEYS[2], 'f:' .. ARGV[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 1`);

// KEYS: the conversation's stream, user-index marker, legacy index, overlay, set of open streams, then the
// quota's three. ARGV: the hub's clock (ms), the quota's four. The open streams' keys are built here
// (redis-stream.store.ts's layout): they share the bot's slot. Returns 1 when the stream existed, else 0.
const ERASE = new LuaScript(`local now = tonumber(ARGV[1])${LUA_QUOTA}
local Q = quota_of(6, 2)
local existed = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
for _, id in ipairs(redis.call('SMEMBERS', KEYS[5])) do
  redis.call('DEL', Q.bot .. ':stream:' .. id, Q.bot .. ':stream:' .. id .. ':changes')
  q_forget(Q, Q.streams, 's:', id)
end
redis.call('DEL', KEYS[5])
q_forget(Q, Q.convs, 'c:', Q.member)
return existed`);

// KEYS: a conversation's stream, its user-index marker. ARGV: the marker's TTL (s). Sets the marker while
// the conversation exists: 1, else 0.
const MARK_INDEXED = new LuaScript(`if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[1])
return 1`);

/** A stream entry as Redis returns it: `[streamId, ['id', uuid, 'm', json]]`. */
type StreamEntry = [string, string[]];

/** The conversation log on Redis Streams; see the layout above. */
export class RedisConversationLog implements ConversationLog {
  /** The bots' storage quota, kept by the scripts that write (redis-quota.ts). */
  readonly quota: RedisQuota;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    readonly limits: ConversationLogLimits,
    /** Told when a conversation could not be added to its user's index (see {@link appended}). */
    private readonly indexFailed: (err: unknown) => void = () => {},
    /** BOT_STORAGE_MAX_BYTES and BOT_MAX_CONVERSATIONS (their defaults when unset). */
    quota: BotQuota = quotaOf(schemaDefaults()),
  ) {
    this.quota = new RedisQuota(quota);
  }

  async append(agentId: string, clientId: string | null, message: LoggedMessage, fresh = false): Promise<void> {
    const keys = [...this.appendKeys(agentId, clientId), ...this.quotaKeys(agentId)];
    const args = [
      ...this.appendArgs(message.id, JSON.stringify(message)),
      fresh ? '' : '1',
      Date.now(),
      ...this.quotaArgs(agentId, clientId),
    ];
    const [appended, evicted] = await APPEND.run<[number, string[]]>(this.redis, keys, args);
    if (appended === -3) throw new QuotaExceededError(agentId, 'bytes');
    this.evicted(agentId, evicted);
    await this.appended(agentId, clientId, appended);
  }

  /**
   * One script: the append, then the publish. Only for a channel on the log's server: one Redis
   * server or Sentinel (on a Cluster the channel's shard may hold none of the bot's keys).
   */
  async appendThenPublish(agentId: string, clientId: string | null, message: LoggedMessage, publication: Publication): Promise<void> {
    const json = JSON.stringify(message);
    const keys = [...this.appendKeys(agentId, clientId), ...this.quotaKeys(agentId)];
    const args = [
      ...this.appendArgs(message.id, json),
      publication.channel,
      fill(publication, json),
      Date.now(),
      ...this.quotaArgs(agentId, clientId),
    ];
    const [appended, evicted] = await APPEND_THEN_PUBLISH.run<[number, string[]]>(this.redis, keys, args);
    if (appended === -3) throw new QuotaExceededError(agentId, 'bytes');
    this.evicted(agentId, evicted);
    await this.appended(agentId, clientId, appended);
  }

  async appendReply(
    agentId: string,
    clientId: string,
    message: LoggedMessage,
    publication: Publication | null,
  ): Promise<{ published: boolean; control: ControlState }> {
    const json = JSON.stringify(message);
    const keys = [...this.appendKeys(agentId, clientId), ...this.quotaKeys(agentId), controlKey(this.prefix, agentId, clientId)];
    const args = [
      ...this.appendArgs(message.id, json),
      publication?.channel ?? '',
      publication ? fill(publication, json) : '',
      Date.now(),
      ...this.quotaArgs(agentId, clientId),
    ];
    const [appended, evicted, control] = await APPEND_REPLY.run<[number, string[], string]>(this.redis, keys, args);
    if (appended === -4) throw new ConversationHeldError(controlRecordOf(agentId, clientId, control));
    if (appended === -3) throw new QuotaExceededError(agentId, 'bytes');
    this.evicted(agentId, evicted);
    await this.appended(agentId, clientId, appended);
    return { published: publication !== null, control: control as ControlState };
  }

  /**
   * The bot's quota dropped these conversations: out of their users' indexes too, each in its own
   * slot, so by separate commands after the write (not awaited: the write succeeded). Left there, an
   * index entry would outlive its conversation by up to 2 × HISTORY_TTL_S, a few hundred bytes per
   * clientId outside any quota. A failure goes to `indexFailed`; the entry then expires by itself.
   */
  evicted(agentId: string, clientIds: readonly string[]): void {
    for (const clientId of clientIds) void this.redis.srem(this.userKey(clientId), agentId).catch(this.indexFailed);
  }

  /** The bot's quota keys (LUA_QUOTA's quota_of), in its hash slot. */
  quotaKeys(agentId: string): string[] {
    return this.quota.keys(this.botKey(agentId));
  }

  /** The quota's arguments for a write to the conversation of `clientId` (null: the broadcasts). */
  quotaArgs(agentId: string, clientId: string | null): (string | number)[] {
    return this.quota.args(this.botKey(agentId), clientId);
  }

  /** The keys of {@link LUA_APPEND}'s `append` for a message to `clientId` (null: a broadcast, with no marker). */
  appendKeys(agentId: string, clientId: string | null): string[] {
    if (clientId === null) return [this.broadcastKey(agentId), this.clockKey(agentId)];
    const [stream, marker] = this.conversationKeys(agentId, clientId);
    return [stream, this.clockKey(agentId), marker];
  }

  /** The other arguments of {@link LUA_APPEND}'s `append`. */
  appendArgs(id: string, json: string): (string | number)[] {
    return [id, json, this.limits.maxMessages, this.limits.ttlS];
  }

  /**
   * Finishes an append whose script returned `result`: adds the conversation to its user's index
   * when asked to. The message is logged by then, and maybe handed on or published: a failure here
   * must not fail the append (the sender would send again what arrived), so it goes to
   * `indexFailed` instead. The marker is set only once the index holds the conversation, so the
   * conversation's next append tries again.
   */
  async appended(agentId: string, clientId: string | null, result: number): Promise<void> {
    if (result !== 2 || clientId === null) return;
    const user = this.userKey(clientId);
    const ttl = this.limits.ttlS;
    try {
      const replies = await this.redis
        .multi()
        .sadd(user, agentId)
        .expire(user, 2 * ttl)
        .exec();
      const failed = replies?.find(([err]) => err !== null)?.[0];
      if (failed) throw failed;
      const [stream, marker] = this.conversationKeys(agentId, clientId);
      // Dropped by the bot's quota since (on another replica, whose SREM may have come first): out again.
      if ((await MARK_INDEXED.run<number>(this.redis, [stream, marker], [Math.max(1, Math.floor(ttl / 2))])) === 0) {
        await this.redis.srem(user, agentId);
      }
    } catch (err) {
      this.indexFailed(err);
    }
  }

  async readAfter(agentId: string, clientId: string, afterId: string, max: number): Promise<Recovery> {
    const found = await READ_AFTER.run<-1 | [StreamEntry[], StreamEntry[]]>(this.redis, this.readKeys(agentId, clientId), [
      afterId,
      max,
      this.limits.maxMessages,
    ]);
    if (found === -1) return { ok: false, reason: 'unknown' };
    // A stream that filled its cap may hold more: all or nothing, so nothing.
    if (found[0].length >= afterCap(max) || found[1].length >= afterCap(max)) return { ok: false, reason: 'too-many' };
    const after = mergeSorted(found[0], found[1], compareEntries).map(parseEntry);
    const messages = replayOf(after, await this.overlay(agentId, clientId, overlayIds(after)));
    if (messages.length > max) return { ok: false, reason: 'too-many' };
    return { ok: true, messages };
  }

  async readBefore(agentId: string, clientId: string, before: string | undefined, limit: number): Promise<HistoryPage> {
    const [own, shared] = await READ_BEFORE.run<[StreamEntry[], StreamEntry[]]>(this.redis, this.readKeys(agentId, clientId), [
      before ?? '',
      limit,
      this.limits.maxMessages,
    ]);
    const newestFirst = mergeSorted(own, shared, (x, y) => compareEntries(y, x));
    const page = newestFirst.slice(0, limit).reverse().map(parseEntry);
    return { messages: pageOf(page, await this.overlay(agentId, clientId, overlayIds(page))), hasMore: newestFirst.length > limit };
  }

  async setFeedback(agentId: string, clientId: string, id: string, feedback: MessageFeedback | null): Promise<boolean> {
    const keys = [this.conversationKeys(agentId, clientId)[0], this.overlayKey(agentId, clientId)];
    const args = [id, this.limits.maxMessages, feedback === null ? '' : JSON.stringify(feedback), this.limits.ttlS];
    return (await SET_FEEDBACK.run<number>(this.redis, keys, args)) === 1;
  }

  async findBotMessage(agentId: string, clientId: string, id: string): Promise<LoggedMessage | null> {
    const keys = [this.conversationKeys(agentId, clientId)[0], this.overlayKey(agentId, clientId)];
    const found = await FIND_MESSAGE.run<[string, string | null] | null>(this.redis, keys, [id, this.limits.maxMessages]);
    if (!found) return null;
    const entry = decodeEntry(found[0]);
    if (entry.kind === 'end' || entry.message.author !== 'agent') return null;
    return found[1] ? (JSON.parse(found[1]) as LoggedMessage) : entry.message;
  }

  async replaceBotMessage(agentId: string, clientId: string, message: LoggedMessage): Promise<boolean> {
    const keys = [this.conversationKeys(agentId, clientId)[0], this.overlayKey(agentId, clientId)];
    const args = [message.id, this.limits.maxMessages, JSON.stringify(message), this.limits.ttlS];
    return (await REPLACE_MESSAGE.run<number>(this.redis, keys, args)) === 1;
  }

  /** The overlay fields of `ids` in a conversation: finals of streamed messages and feedback. */
  private async overlay(agentId: string, clientId: string, ids: readonly string[]): Promise<Map<string, OverlayFields>> {
    const out = new Map<string, OverlayFields>();
    if (ids.length === 0) return out;
    const values = await this.redis.hmget(this.overlayKey(agentId, clientId), ...ids.flatMap((id) => [`f:${id}`, `r:${id}`]));
    ids.forEach((id, i) => {
      const [final, feedback] = [values[2 * i], values[2 * i + 1]];
      if (final !== null || feedback !== null) out.set(id, { final, feedback });
    });
    return out;
  }

  /** A conversation's overlay: `f:<id>` the final of a streamed message, `r:<id>` the feedback on a bot message. */
  overlayKey(agentId: string, clientId: string): string {
    return `${this.botKey(agentId)}:overlay:${clientId}`;
  }

  async deleteConversation(agentId: string, clientId: string): Promise<boolean> {
    const [erased] = await Promise.all([this.erase(agentId, clientId), this.redis.srem(this.userKey(clientId), agentId)]);
    return erased;
  }

  /**
   * Erases every conversation of `clientId`: the bots its index names, and those a scan of the
   * keyspace finds, since an index write that failed (the append had succeeded) leaves a
   * conversation the index does not name until its next message. The scan costs one pass over the
   * keys of every master, which an erasure request (rare, and one that must be complete) can pay.
   */
  async deleteUser(clientId: string): Promise<number> {
    const user = this.userKey(clientId);
    const [indexed, scanned] = await Promise.all([this.redis.smembers(user), this.scanConversations(clientId)]);
    // One call per bot: each bot's keys are in their own slot.
    const erased = await Promise.all([...new Set([...indexed, ...scanned])].map((agentId) => this.erase(agentId, clientId)));
    await this.redis.del(user);
    return erased.filter(Boolean).length;
  }

  async close(): Promise<void> {}

  /**
   * Deletes a conversation's keys, the message-id index that replicas before this layout kept
   * beside the stream (during a rolling upgrade; it expires by itself otherwise), and its open
   * streams, whose later deltas and end then find nothing to write to; gives their bytes back to
   * the bot's quota. True when the stream existed.
   */
  private async erase(agentId: string, clientId: string): Promise<boolean> {
    const [stream, marker] = this.conversationKeys(agentId, clientId);
    const bot = this.botKey(agentId);
    const keys = [stream, marker, `${bot}:logidx:${clientId}`, this.overlayKey(agentId, clientId), `${bot}:streams:${clientId}`];
    const args = [Date.now(), ...this.quotaArgs(agentId, clientId)];
    return (await ERASE.run<number>(this.redis, [...keys, ...this.quotaKeys(agentId)], args)) === 1;
  }

  /** A conversation's stream and its user-index marker. */
  private conversationKeys(agentId: string, clientId: string): [stream: string, marker: string] {
    const bot = this.botKey(agentId);
    return [`${bot}:log:${clientId}`, `${bot}:logindexed:${clientId}`];
  }

  private broadcastKey(agentId: string): string {
    return `${this.botKey(agentId)}:broadcasts`;
  }

  private readKeys(agentId: string, clientId: string): [stream: string, broadcasts: string] {
    return [this.conversationKeys(agentId, clientId)[0], this.broadcastKey(agentId)];
  }

  private clockKey(agentId: string): string {
    return `${this.botKey(agentId)}:clock`;
  }

  /** The bots whose conversation stream with `clientId` exists, found by SCAN on every master. */
  private async scanConversations(clientId: string): Promise<string[]> {
    const pattern = `${globEscape(this.prefix)}{*}:log:${globEscape(clientId)}`;
    const nodes = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis];
    const agentIds: string[] = [];
    for (const node of nodes) {
      for await (const keys of node.scanStream({ match: pattern, count: 1000 }) as AsyncIterable<string[]>) {
        for (const key of keys) {
          const agentId = this.agentOfConversationKey(key, clientId);
          if (agentId !== null) agentIds.push(agentId);
        }
      }
    }
    return agentIds;
  }

  /** The agentId of `key` when it is exactly the conversation stream of that bot with `clientId`. */
  private agentOfConversationKey(key: string, clientId: string): string | null {
    const close = key.indexOf('}', this.prefix.length);
    if (close < 0) return null;
    // agentIds have no braces or percent signs (AGENT_ID_PATTERN), so the tag is the id as it is.
    const agentId = key.slice(this.prefix.length + 1, close);
    return this.conversationKeys(agentId, clientId)[0] === key ? agentId : null;
  }

  /** The prefix of every key of a bot: its hash tag puts them in one slot. */
  botKey(agentId: string): string {
    return `${this.prefix}${hashTag(agentId)}`;
  }

  private userKey(clientId: string): string {
    return `${this.prefix}${hashTag(`user:${clientId}`)}:conversations`;
  }
}

function compareEntries(x: StreamEntry, y: StreamEntry): number {
  const [xm, xs] = x[0].split('-').map(Number);
  const [ym, ys] = y[0].split('-').map(Number);
  return xm - ym || xs - ys;
}

function parseEntry(entry: StreamEntry): LogEntry {
  const fields = entry[1];
  return decodeEntry(fields[fields.indexOf('m') + 1]);
}

/** `value` matched literally in a SCAN/KEYS pattern. */
function globEscape(value: string): string {
  return value.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
