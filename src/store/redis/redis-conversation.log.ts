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
import { LUA_NOW, LuaScript } from './lua-script';

// Layout. Per conversation a stream `<prefix>{<agentId>}:log:<clientId>` whose entries are
// `id <uuid> m <wire json>`, and a hash `…:logidx:<clientId>` from message id to stream id; per bot the
// same pair for broadcasts (`…:broadcasts`, `…:broadcastidx`). The `{<agentId>}` hash tag puts every
// key of a bot in one slot, so each script below touches one slot (Redis Cluster).
//
// Stream ids are not derived from the UUIDv7: replicas' clocks differ, and XADD refuses an id at or
// below a stream's last one, so a reply from a replica whose clock is a few ms behind would fail to
// log. Nor are they `*`: each stream numbers its own entries within a millisecond, so a conversation
// and the broadcasts could not be merged in order. Instead one clock per bot (`…:clock`, the last id
// given out) hands out `<Redis ms>-<n>` ids that grow across all the bot's streams; the hash finds an
// entry by message id in O(1). Trimming is exact so the hash drops exactly the trimmed ids.
//
// Per user a set `<prefix>{user:<clientId>}:conversations` of agentIds lets deleteUser find every
// conversation; it lives in another slot, so it is written and read by separate commands. It is
// refreshed (SADD, EXPIRE 2 × ttl) when a conversation starts and then at most every ttl / 2, noted
// as `~indexed` in the conversation's index, so it outlives the conversation without costing a
// command on every append.

// Lua: appends a message to a stream (needs LUA_NOW's `now`). Arguments: stream, index, the bot's
// clock, message id, wire json, max entries, ttl seconds, how often (ms) the user index needs
// refreshing or -1 (broadcasts). Returns 0 for an id already logged, 2 when the caller must refresh
// the user's index of conversations, else 1.
export const LUA_APPEND = `
local function append(stream, index, clock, id, json, max, ttl, every)
  if redis.call('HEXISTS', index, id) == 1 then return 0 end
  local ms, n = now, 0
  local last = redis.call('GET', clock)
  if last then
    local lm, ln = string.match(last, '(%d+)-(%d+)')
    lm = tonumber(lm)
    if lm >= ms then ms = lm; n = tonumber(ln) + 1 end
  end
  local sid = string.format('%d-%d', ms, n)
  redis.call('SET', clock, sid, 'EX', ttl)
  redis.call('XADD', stream, sid, 'id', id, 'm', json)
  redis.call('HSET', index, id, sid)
  max = tonumber(max)
  local over = redis.call('XLEN', stream) - max
  if over > 0 then
    local gone = redis.call('XRANGE', stream, '-', '+', 'COUNT', over)
    for _, e in ipairs(gone) do redis.call('HDEL', index, e[2][2]) end
    redis.call('HSET', index, '~trimmed', gone[#gone][1])
    redis.call('XTRIM', stream, 'MAXLEN', max)
  end
  redis.call('EXPIRE', stream, ttl)
  redis.call('EXPIRE', index, ttl)
  every = tonumber(every)
  if every >= 0 and now - tonumber(redis.call('HGET', index, '~indexed') or '0') > every then return 2 end
  return 1
end`;

// KEYS: stream, index, the bot's clock. ARGV: as append's after the keys.
const APPEND = new LuaScript(`${LUA_NOW}${LUA_APPEND}
return append(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])`);

// KEYS: as APPEND's. ARGV: as APPEND's, then a shard channel and a payload, published only once the
// append succeeded (an error in append aborts the script before the publish).
const APPEND_THEN_PUBLISH = new LuaScript(`${LUA_NOW}${LUA_APPEND}
local appended = append(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
redis.call('SPUBLISH', ARGV[6], ARGV[7])
return appended`);

// Lua prologue: the stream id of a message id in the conversation or the broadcasts, and whether a
// stream lost (trimmed) an entry newer than a stream id. XTRIM does not move a stream's
// max-deleted-entry-id, so APPEND keeps the newest trimmed id in the index under `~trimmed`.
const LOOKUP = `
local function find(id)
  if string.sub(id, 1, 1) == '~' then return false end
  return redis.call('HGET', KEYS[2], id) or redis.call('HGET', KEYS[4], id)
end
local function newer(a, b)
  local am, as = string.match(a, '(%d+)-(%d+)'); local bm, bs = string.match(b, '(%d+)-(%d+)')
  am = tonumber(am); bm = tonumber(bm)
  return am > bm or (am == bm and tonumber(as) > tonumber(bs))
end
local function trimmedAfter(index, sid)
  local trimmed = redis.call('HGET', index, '~trimmed')
  return trimmed and newer(trimmed, sid)
end`;

// KEYS: stream, index, broadcasts, broadcast index. ARGV: after id, max.
// Returns -1 (unknown id, or a trimmed gap after it), else { conversation entries, broadcast entries }.
const READ_AFTER = new LuaScript(`${LOOKUP}
local sid = find(ARGV[1])
if not sid then return -1 end
if trimmedAfter(KEYS[2], sid) or trimmedAfter(KEYS[4], sid) then return -1 end
local n = tonumber(ARGV[2]) + 1
return { redis.call('XRANGE', KEYS[1], '(' .. sid, '+', 'COUNT', n), redis.call('XRANGE', KEYS[3], '(' .. sid, '+', 'COUNT', n) }`);

// KEYS: as READ_AFTER. ARGV: before id or '', limit. Returns both streams' entries newest first.
const READ_BEFORE = new LuaScript(`${LOOKUP}
local top = '+'
if ARGV[1] ~= '' then
  local sid = find(ARGV[1])
  if not sid then return { {}, {} } end
  top = '(' .. sid
end
local n = tonumber(ARGV[2]) + 1
return { redis.call('XREVRANGE', KEYS[1], top, '-', 'COUNT', n), redis.call('XREVRANGE', KEYS[3], top, '-', 'COUNT', n) }`);

/** A stream entry as Redis returns it: `[streamId, ['id', uuid, 'm', json]]`. */
type StreamEntry = [string, string[]];

/** The conversation log on Redis Streams; see the layout above. */
export class RedisConversationLog implements ConversationLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly limits: ConversationLogLimits,
  ) {}

  async append(agentId: string, clientId: string | null, message: LoggedMessage): Promise<void> {
    const appended = await APPEND.run<number>(
      this.redis,
      this.appendKeys(agentId, clientId),
      this.appendArgs(clientId, message.id, JSON.stringify(message)),
    );
    await this.appended(agentId, clientId, appended);
  }

  /**
   * One script: the append, then the publish. Only for a channel on the log's server: one Redis
   * server or Sentinel (on a Cluster the channel's shard may hold none of the bot's keys).
   */
  async appendThenPublish(agentId: string, clientId: string | null, message: LoggedMessage, publication: Publication): Promise<void> {
    const json = JSON.stringify(message);
    const args = [...this.appendArgs(clientId, message.id, json), publication.channel, publication.before + json + publication.after];
    const appended = await APPEND_THEN_PUBLISH.run<number>(this.redis, this.appendKeys(agentId, clientId), args);
    await this.appended(agentId, clientId, appended);
  }

  /** The keys of {@link LUA_APPEND}'s `append` for a message to `clientId` (null: a broadcast). */
  appendKeys(agentId: string, clientId: string | null): [stream: string, index: string, clock: string] {
    const [stream, index] = clientId === null ? this.broadcastKeys(agentId) : this.conversationKeys(agentId, clientId);
    return [stream, index, this.clockKey(agentId)];
  }

  /** The other arguments of {@link LUA_APPEND}'s `append`. */
  appendArgs(clientId: string | null, id: string, json: string): (string | number)[] {
    const ttl = this.limits.ttlS;
    return [id, json, this.limits.maxMessages, ttl, clientId === null ? -1 : (ttl * 1000) / 2];
  }

  /** Finishes an append whose script returned `result`: refreshes the user's index of conversations when asked to. */
  async appended(agentId: string, clientId: string | null, result: number): Promise<void> {
    if (result !== 2 || clientId === null) return;
    const user = this.userKey(clientId);
    const ttl = this.limits.ttlS;
    await this.redis
      .multi()
      .sadd(user, agentId)
      .expire(user, 2 * ttl)
      .exec();
    // Noted only once the index holds the conversation: after a failure above, the next append retries.
    await this.redis.hset(this.conversationKeys(agentId, clientId)[1], '~indexed', Date.now());
  }

  async readAfter(agentId: string, clientId: string, afterId: string, max: number): Promise<Recovery> {
    const found = await READ_AFTER.run<-1 | [StreamEntry[], StreamEntry[]]>(this.redis, this.readKeys(agentId, clientId), [afterId, max]);
    if (found === -1) return { ok: false, reason: 'unknown' };
    const after = mergeSorted(found[0], found[1], compareEntries);
    if (after.length > max) return { ok: false, reason: 'too-many' };
    return { ok: true, messages: after.map(parseEntry) };
  }

  async readBefore(agentId: string, clientId: string, before: string | undefined, limit: number): Promise<HistoryPage> {
    const [own, shared] = await READ_BEFORE.run<[StreamEntry[], StreamEntry[]]>(this.redis, this.readKeys(agentId, clientId), [
      before ?? '',
      limit,
    ]);
    const newestFirst = mergeSorted(own, shared, (x, y) => compareEntries(y, x));
    return { messages: newestFirst.slice(0, limit).reverse().map(parseEntry), hasMore: newestFirst.length > limit };
  }

  async deleteConversation(agentId: string, clientId: string): Promise<boolean> {
    const [deleted] = await Promise.all([
      this.redis.del(...this.conversationKeys(agentId, clientId)),
      this.redis.srem(this.userKey(clientId), agentId),
    ]);
    return deleted > 0;
  }

  async deleteUser(clientId: string): Promise<number> {
    const user = this.userKey(clientId);
    const agentIds = await this.redis.smembers(user);
    // One DEL per bot: each bot's keys are in their own slot.
    const deleted = await Promise.all(agentIds.map((agentId) => this.redis.del(...this.conversationKeys(agentId, clientId))));
    await this.redis.del(user);
    return deleted.filter((n) => n > 0).length;
  }

  async close(): Promise<void> {}

  private conversationKeys(agentId: string, clientId: string): [string, string] {
    const bot = `${this.prefix}${hashTag(agentId)}`;
    return [`${bot}:log:${clientId}`, `${bot}:logidx:${clientId}`];
  }

  private broadcastKeys(agentId: string): [string, string] {
    const bot = `${this.prefix}${hashTag(agentId)}`;
    return [`${bot}:broadcasts`, `${bot}:broadcastidx`];
  }

  private readKeys(agentId: string, clientId: string): string[] {
    return [...this.conversationKeys(agentId, clientId), ...this.broadcastKeys(agentId)];
  }

  private clockKey(agentId: string): string {
    return `${this.prefix}${hashTag(agentId)}:clock`;
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

function parseEntry(entry: StreamEntry): LoggedMessage {
  const fields = entry[1];
  return JSON.parse(fields[fields.indexOf('m') + 1]) as LoggedMessage;
}
