import type { LoggedMessage } from '../conversation-log';
import {
  finalHead,
  type DeltaPublication,
  type DeltaResult,
  type EndedStream,
  type EndPublications,
  type OpenStream,
  type StreamBounds,
  type StreamEnding,
  type StreamRecord,
  type StreamRef,
  type StreamStore,
  type StreamTarget,
} from '../stream-store';
import { streamStartJson } from '../log-entries';
import { hashTag, type RedisClient } from './redis-client';
import { LUA_APPEND, LUA_FIND, type RedisConversationLog } from './redis-conversation.log';
import { LuaScript } from './lua-script';
import { LUA_QUOTA } from './redis-quota';
import { QuotaExceededError } from '../bot-quota';

// Layout, in the bot's hash slot beside its log: per stream a hash `…{<agentId>}:stream:<id>` (the start
// message `m`, the final's JSON parts `head`/`tail`, start `data`, `client`, `owner`, `seq`) and its text
// `…:stream:<id>:text` (APPEND per delta); per conversation a set `…:streams:<clientId>` of open ids. All
// expire `ttlMs` after the open or the last delta that renewed them (the owner renews at least every
// quarter of it), so nothing outlives a dead replica for long; the orphan sweep
// (`…{streams}:orphans`, a sorted set of every open stream by the time its owner last promised to be
// alive) ends them before that.

// KEYS: hash, text, set, then the log's stream, clock, user-index marker, then the quota's three. ARGV: m,
// head, tail, data, client, owner, ttl ms, '1' to log, id, start entry json, log max, log ttl s, now ms,
// the quota's four, the bot's most open streams. Returns -3 (the bot has its most streams open), -4 (no
// room in its bytes; nothing written either way), else { append's result or 1, evicted clientIds }.
const OPEN = new LuaScript(`local now = tonumber(ARGV[13])${LUA_QUOTA}${LUA_APPEND}
local Q = quota_of(7, 14)
local max_open = tonumber(ARGV[18])
if redis.call('ZCARD', Q.streams) >= max_open then
  q_reclaim(Q)
  if redis.call('ZCARD', Q.streams) >= max_open then return -3 end
end
local need = STREAM_OVERHEAD
if ARGV[8] == '1' then need = need + #ARGV[10] + #ARGV[9] + ENTRY_OVERHEAD end
if not q_reserve(Q, need, Q.member) then return -4 end
redis.call('HSET', KEYS[1], 'm', ARGV[1], 'head', ARGV[2], 'tail', ARGV[3], 'data', ARGV[4], 'client', ARGV[5], 'owner', ARGV[6], 'seq', 0)
redis.call('SET', KEYS[2], '', 'PX', ARGV[7])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('SADD', KEYS[3], ARGV[9])
redis.call('PEXPIRE', KEYS[3], ARGV[7])
q_take(Q, 's:' .. ARGV[9], STREAM_OVERHEAD)
q_touch(Q, Q.streams, ARGV[9], tonumber(ARGV[7]))
if ARGV[8] == '1' then return { append(KEYS[4], KEYS[5], KEYS[6], ARGV[9], ARGV[10], ARGV[11], ARGV[12], nil, Q), Q.evicted } end
return { 1, Q.evicted }`);

// KEYS: hash, text, the conversation's set, then the quota's three. ARGV: text, max bytes, ttl ms ('' to
// leave the expiry as it is), a shard channel ('' for none), the publication up to the delta's seq and
// from after it (the text's JSON and the frame's end), the hub's clock (ms), the quota's four, the
// stream's id. Returns -1 (not open), -2 (too large), -3 (no room in the bot's quota) or the seq, with
// the clientIds of the conversations the quota dropped to make room when there are any: { seq, evicted }.
// HINCRBY answers whether the stream is open (a missing hash counts from 0, and only the first delta
// needs to ask further) and APPEND the size; a delta past the limit is undone (the relay refuses those
// before they get here, so the copy it costs is rare), and the expiry is renewed only when the caller
// asks. The quota costs a delta two increments (q_delta) while the bot is under it.
const APPEND = new LuaScript(`local now = tonumber(ARGV[7])${LUA_QUOTA}
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if seq == 1 and redis.call('HEXISTS', KEYS[1], 'm') == 0 then redis.call('DEL', KEYS[1]); return -1 end
local Q = quota_of(4, 8)
if not q_delta(Q, ARGV[12], #ARGV[1]) then redis.call('HINCRBY', KEYS[1], 'seq', -1); return -3 end
local bytes = redis.call('APPEND', KEYS[2], ARGV[1])
if bytes > tonumber(ARGV[2]) then
  local kept = bytes - #ARGV[1]
  redis.call('HINCRBY', KEYS[1], 'seq', -1)
  redis.call('SET', KEYS[2], kept == 0 and '' or redis.call('GETRANGE', KEYS[2], 0, kept - 1), 'KEEPTTL')
  q_charge(Q, 's:' .. ARGV[12], -#ARGV[1])
  return -2
end
if ARGV[3] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3]); redis.call('PEXPIRE', KEYS[2], ARGV[3]); redis.call('PEXPIRE', KEYS[3], ARGV[3])
  q_touch(Q, Q.streams, ARGV[12], tonumber(ARGV[3]))
end
if ARGV[4] ~= '' then redis.call('SPUBLISH', ARGV[4], ARGV[5] .. seq .. ARGV[6]) end
if #Q.evicted > 0 then return { seq, Q.evicted } end
return seq`);

// KEYS: hash, text, set, the log's stream, clock, user-index marker, overlay, then the quota's three. ARGV:
// id, final text JSON ('': the accumulated text), data JSON ('': the start's), status, '1' to log, log max,
// log ttl s, now ms, then a shard channel ('' for none) and the publication's parts around the
// `message:end` JSON (the final with its status), published once the marker is logged, then the quota's
// four. Returns false (not open) or { final json, seq }. Overlay fields of messages older than the oldest
// entry the log keeps are pruned here (UUIDv7 ids sort by time). The stream's bytes leave the quota; the
// final's join its conversation's.
const END = new LuaScript(`local now = tonumber(ARGV[8])${LUA_QUOTA}${LUA_FIND}${LUA_APPEND}
local Q = quota_of(8, 12)
if redis.call('EXISTS', KEYS[1]) == 0 then q_forget(Q, Q.streams, 's:', ARGV[1]); return false end
local m = redis.call('HMGET', KEYS[1], 'head', 'tail', 'data', 'seq')
local text = ARGV[2]
if text == '' then text = cjson.encode(redis.call('GET', KEYS[2]) or '') end
local data = ARGV[3]
if data == '' then data = m[3] end
local final = m[1] .. ',"text":' .. text
if data ~= '' then final = final .. ',"data":' .. data end
final = final .. m[2]
if ARGV[4] ~= 'complete' then final = final .. ',"status":"' .. ARGV[4] .. '"' end
final = final .. '}'
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
q_forget(Q, Q.streams, 's:', ARGV[1])
if ARGV[5] == '1' then
  local max, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
  append(KEYS[4], KEYS[5], KEYS[6], ARGV[1], '{"endOf":"' .. ARGV[1] .. '"}', max, ttl, 'e', Q)
  local conv = 'c:' .. Q.member
  q_charge(Q, conv, #final - redis.call('HSTRLEN', KEYS[7], 'f:' .. ARGV[1]))
  redis.call('HSET', KEYS[7], 'f:' .. ARGV[1], final)
  redis.call('EXPIRE', KEYS[7], ttl)
  local sid = oldest_kept(KEYS[4], redis.call('XLEN', KEYS[4]), max)
  local first = sid and redis.call('XRANGE', KEYS[4], sid, sid) or redis.call('XRANGE', KEYS[4], '-', '+', 'COUNT', 1)
  if first[1] then
    local oldest = first[1][2][2]
    for _, field in ipairs(redis.call('HKEYS', KEYS[7])) do
      if string.sub(field, 3) < oldest then
        local held = tonumber(redis.call('HGET', Q.sizes, conv) or '0')
        if string.sub(field, 1, 2) == 'f:' then q_charge(Q, conv, -math.min(held, redis.call('HSTRLEN', KEYS[7], field))) end
        redis.call('HDEL', KEYS[7], field)
      end
    end
  end
end
if ARGV[9] ~= '' then
  local ended = final
  if ARGV[4] == 'complete' then ended = string.sub(final, 1, -2) .. ',"status":"complete"}' end
  redis.call('SPUBLISH', ARGV[9], ARGV[10] .. ended .. ARGV[11])
end
return { final, tonumber(m[4]) }`);

// KEYS: hash, text. Returns false or { m, client, owner, seq, text }.
const GET = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local m = redis.call('HMGET', KEYS[1], 'm', 'client', 'owner', 'seq')
return { m[1], m[2], m[3], m[4], redis.call('GET', KEYS[2]) or '' }`);

// KEYS: the conversation's set. ARGV: the bot's key prefix. Returns { m, client, owner, seq, text } per open
// stream (forgetting ids whose stream expired). The stream keys are built here: they share the set's slot.
const OPEN_OF = new LuaScript(`
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local hash = ARGV[1] .. ':stream:' .. id
  if redis.call('EXISTS', hash) == 1 then
    local m = redis.call('HMGET', hash, 'm', 'client', 'owner', 'seq')
    out[#out + 1] = { m[1], m[2], m[3], m[4], redis.call('GET', hash .. ':text') or '' }
  else
    redis.call('SREM', KEYS[1], id)
  end
end
return out`);

type Row = [message: string, client: string, owner: string, seq: string, text: string];

/** See {@link RedisStreamStore.prepare}. */
interface Prepared {
  publication: DeltaPublication | null;
  /** Hash, text, the conversation's set (a delta that renews the expiry touches it), the quota's three. */
  keys: string[];
  quotaArgs: (string | number)[];
  head: string;
}

/** Open streams on Redis; see the layout above. */
export class RedisStreamStore implements StreamStore {
  private readonly orphanKey: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly log: RedisConversationLog,
  ) {
    this.orphanKey = `${prefix}${hashTag('streams')}:orphans`;
  }

  async open(record: StreamRecord, bounds: StreamBounds, logged: boolean): Promise<void> {
    const { message, clientId, owner } = record;
    const { agentId, id } = message;
    const { head, tail } = finalHead(message);
    const keys = [...this.streamKeys(agentId, id, clientId), ...this.log.appendKeys(agentId, clientId)];
    const [, json, max, ttl] = this.log.appendArgs(id, streamStartJson(message));
    const data = message.data === undefined ? '' : JSON.stringify(message.data);
    const args = [
      JSON.stringify(message),
      head,
      tail,
      data,
      clientId,
      owner,
      bounds.ttlMs,
      logged ? '1' : '',
      id,
      json,
      max,
      ttl,
      Date.now(),
      ...this.log.quotaArgs(agentId, clientId),
      this.log.quota.limits.maxOpenStreams,
    ];
    const opened = await OPEN.run<number | [number, string[]]>(this.redis, [...keys, ...this.log.quotaKeys(agentId)], args);
    if (opened === -3) throw new QuotaExceededError(agentId, 'streams');
    if (opened === -4) throw new QuotaExceededError(agentId, 'bytes');
    const [result, evicted] = opened as [number, string[]];
    this.log.evicted(agentId, evicted);
    if (logged) await this.log.appended(agentId, clientId, result);
  }

  async append(
    stream: StreamTarget,
    text: string,
    bounds: StreamBounds,
    publication: DeltaPublication | null,
    renew: boolean,
  ): Promise<DeltaResult> {
    const prepared = this.prepare(stream, publication);
    const tail = publication === null ? '' : `,"text":${JSON.stringify(text)}}${publication.after}`;
    const args = [
      text,
      bounds.maxBytes,
      renew ? bounds.ttlMs : '',
      publication?.channel ?? '',
      prepared.head,
      tail,
      Date.now(),
      ...prepared.quotaArgs,
      stream.id,
    ];
    const appended = await APPEND.run<number | [number, string[]]>(this.redis, prepared.keys, args);
    let seq: number;
    if (typeof appended === 'number') seq = appended;
    else {
      [seq] = appended;
      this.log.evicted(stream.agentId, appended[1]);
    }
    if (seq === -1) return { ok: false, reason: 'not-found' };
    if (seq === -2) return { ok: false, reason: 'too-large' };
    if (seq === -3) return { ok: false, reason: 'quota' };
    return { ok: true, seq };
  }

  async end(
    agentId: string,
    id: string,
    ending: StreamEnding,
    logged: boolean,
    publicationFor?: EndPublications,
  ): Promise<EndedStream | null> {
    // The conversation is in the stream's hash; read it first (the set key needs it).
    const open = await this.get(agentId, id);
    if (!open) return null;
    const { clientId } = open;
    const [stream, clock, marker] = this.log.appendKeys(agentId, clientId);
    const keys = [
      ...this.streamKeys(agentId, id, clientId),
      stream,
      clock,
      marker,
      this.log.overlayKey(agentId, clientId),
      ...this.log.quotaKeys(agentId),
    ];
    const { maxMessages, ttlS } = this.log.limits;
    const text = ending.text === undefined ? '' : JSON.stringify(ending.text);
    const data = ending.data === undefined ? '' : JSON.stringify(ending.data);
    const publication = publicationFor?.(agentId, clientId) ?? null;
    const args = [
      id,
      text,
      data,
      ending.status,
      logged ? '1' : '',
      maxMessages,
      ttlS,
      Date.now(),
      publication?.channel ?? '',
      publication?.before ?? '',
      publication?.after ?? '',
      ...this.log.quotaArgs(agentId, clientId),
    ];
    const result = await END.run<[string, number] | null>(this.redis, keys, args);
    if (!result) return null;
    return { final: JSON.parse(result[0]) as LoggedMessage, seq: Number(result[1]), clientId, published: publication !== null };
  }

  async get(agentId: string, id: string): Promise<OpenStream | null> {
    const [hash, text] = this.streamKeys(agentId, id, null);
    const row = await GET.run<Row | null>(this.redis, [hash, text]);
    return row ? parseRow(row) : null;
  }

  async openOf(agentId: string, clientId: string): Promise<OpenStream[]> {
    const set = this.setKey(agentId, clientId);
    const rows = await OPEN_OF.run<Row[]>(this.redis, [set], [this.log.botKey(agentId)]);
    return rows.map(parseRow).sort((a, b) => (a.message.id < b.message.id ? -1 : 1));
  }

  async keepAlive(refs: readonly StreamRef[], untilMs: number): Promise<void> {
    if (refs.length === 0) return;
    await this.redis.zadd(this.orphanKey, ...refs.flatMap((ref) => [untilMs, member(ref)]));
  }

  async orphans(nowMs: number, limit: number): Promise<StreamRef[]> {
    const members = await this.redis.zrangebyscore(this.orphanKey, '-inf', nowMs, 'LIMIT', 0, limit);
    return members.map((m) => {
      const at = m.indexOf(' ');
      return { agentId: m.slice(0, at), id: m.slice(at + 1) };
    });
  }

  async forget(refs: readonly StreamRef[]): Promise<void> {
    if (refs.length > 0) await this.redis.zrem(this.orphanKey, ...refs.map(member));
  }

  /**
   * What every delta of a stream shares: its keys and the publication's head. Built at its first
   * delta and kept on the caller's target (the relay keeps one per stream), so a delta builds only
   * its own part.
   */
  private prepare(stream: StreamTarget, publication: DeltaPublication | null): Prepared {
    const cached = stream.prepared as Prepared | undefined;
    if (cached?.publication === publication) return cached;
    const keys = [...this.streamKeys(stream.agentId, stream.id, stream.clientId), ...this.log.quotaKeys(stream.agentId)];
    const head = publication === null ? '' : `${publication.before}{"id":${JSON.stringify(stream.id)},"seq":`;
    const prepared: Prepared = { publication, keys, quotaArgs: this.log.quotaArgs(stream.agentId, stream.clientId), head };
    stream.prepared = prepared;
    return prepared;
  }

  /** Hash, text and (when the conversation is known) the conversation's set of open streams. */
  private streamKeys(agentId: string, id: string, clientId: string | null): string[] {
    const hash = `${this.log.botKey(agentId)}:stream:${id}`;
    return clientId === null ? [hash, `${hash}:text`, hash] : [hash, `${hash}:text`, this.setKey(agentId, clientId)];
  }

  private setKey(agentId: string, clientId: string): string {
    return `${this.log.botKey(agentId)}:streams:${clientId}`;
  }
}

/** An agentId has no space (AGENT_ID_PATTERN). */
function member(ref: StreamRef): string {
  return `${ref.agentId} ${ref.id}`;
}

function parseRow([message, client, owner, seq, text]: Row): OpenStream {
  return { message: JSON.parse(message) as LoggedMessage, clientId: client, owner, seq: Number(seq), text };
}
