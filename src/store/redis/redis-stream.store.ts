import type { LoggedMessage } from '../conversation-log';
import { replayChanges } from '../stream-changes';
import {
  finalOf,
  type ChangeFrame,
  type DeltaPublication,
  type DeltaResult,
  type EncodedChange,
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
import { messageEnd } from '../../protocol';
import { hashTag, type RedisClient } from './redis-client';
import { LUA_APPEND, LUA_FIND, type RedisConversationLog } from './redis-conversation.log';
import { LuaScript } from './lua-script';
import { LUA_QUOTA } from './redis-quota';
import { QuotaExceededError } from '../bot-quota';
import { ConversationHeldError } from '../control-store';
import { controlKey, controlRecordOf, LUA_CONTROL } from './redis-control.store';

// Layout, in the bot's hash slot beside its log: per stream a hash `…{<agentId>}:stream:<id>` (the start
// message `m`, `client`, `owner`, `seq`, the `bytes` counted against the bound) and its changes
// `…:stream:<id>:changes` (APPEND per change, one line of JSON each: see store/stream-changes.ts); per
// conversation a set `…:streams:<clientId>` of open ids. All expire `ttlMs` after the open or the last
// change that renewed them (the owner renews at least every quarter of it), so nothing outlives a dead
// replica for long; the orphan sweep (`…{streams}:orphans`, a sorted set of every open stream by the
// time its owner last promised to be alive) ends them before that. JSON a client reads (a change's
// event, the final, its `message:end`) is built by the caller in TypeScript; the scripts only store,
// count and publish it. Every script that stores also keeps the bot's storage quota (redis-quota.ts).

// KEYS: hash, changes, set, then the log's stream, clock, user-index marker, then the quota's three,
// then the conversation's control record. ARGV: m, client, owner, ttl ms, '1' to log, id, start
// entry json, log max, log ttl s, now ms, the quota's four, the bot's most open streams. Returns
// { -5, the control record's json } (an operator holds the conversation), -3 (the bot has its most
// streams open), -4 (no room in its bytes; nothing written in each case), else { append's result or
// 1, evicted clientIds }.
const OPEN = new LuaScript(`local now = tonumber(ARGV[10])${LUA_QUOTA}${LUA_APPEND}${LUA_CONTROL}
local control, record = control_of(KEYS[10])
if control == 'human' then return { -5, record } end
local Q = quota_of(7, 11)
local max_open = tonumber(ARGV[15])
if redis.call('ZCARD', Q.streams) >= max_open then
  q_reclaim(Q)
  if redis.call('ZCARD', Q.streams) >= max_open then return -3 end
end
local need = STREAM_OVERHEAD
if ARGV[5] == '1' then need = need + #ARGV[7] + #ARGV[6] + ENTRY_OVERHEAD end
if not q_reserve(Q, need, Q.member) then return -4 end
redis.call('HSET', KEYS[1], 'm', ARGV[1], 'client', ARGV[2], 'owner', ARGV[3], 'seq', 0, 'bytes', 0)
redis.call('SET', KEYS[2], '', 'PX', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('SADD', KEYS[3], ARGV[6])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
q_take(Q, 's:' .. ARGV[6], STREAM_OVERHEAD)
q_touch(Q, Q.streams, ARGV[6], tonumber(ARGV[4]))
if ARGV[5] == '1' then return { append(KEYS[4], KEYS[5], KEYS[6], ARGV[6], ARGV[7], ARGV[8], ARGV[9], nil, Q), Q.evicted } end
return { 1, Q.evicted }`);

// KEYS: hash, changes, the conversation's set, then the quota's three. ARGV: the encoded change, its bytes
// (0: not bounded), max bytes, ttl ms ('' to leave the expiry as it is), a shard channel ('' for none),
// the publication up to the change's seq and from after it, the hub's clock (ms), the quota's four, the
// stream's id. Returns -1 (not open), -2 (too large), -3 (no room in the bot's quota) or the seq, with
// the clientIds of the conversations the quota dropped to make room when there are any: { seq, evicted }.
// The quota counts the change as stored and costs two increments (q_delta) while the bot is under it.
// HINCRBY answers whether the stream is open (a missing hash counts from 0, and only the first change
// needs to ask further); a change past the bound is undone before
// anything is appended (the relay refuses those before they get here), and the expiry is renewed only
// when the caller asks (docs/streaming.md, "The hub ends every stream").
const APPEND = new LuaScript(`local now = tonumber(ARGV[8])${LUA_QUOTA}
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if seq == 1 and redis.call('HEXISTS', KEYS[1], 'm') == 0 then redis.call('DEL', KEYS[1]); return -1 end
local size = tonumber(ARGV[2])
if size > 0 and redis.call('HINCRBY', KEYS[1], 'bytes', size) > tonumber(ARGV[3]) then
  redis.call('HINCRBY', KEYS[1], 'bytes', -size)
  redis.call('HINCRBY', KEYS[1], 'seq', -1)
  return -2
end
local Q = quota_of(4, 9)
if not q_delta(Q, ARGV[13], #ARGV[1]) then
  if size > 0 then redis.call('HINCRBY', KEYS[1], 'bytes', -size) end
  redis.call('HINCRBY', KEYS[1], 'seq', -1)
  return -3
end
redis.call('APPEND', KEYS[2], ARGV[1])
if ARGV[4] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[4]); redis.call('PEXPIRE', KEYS[2], ARGV[4]); redis.call('PEXPIRE', KEYS[3], ARGV[4])
  q_touch(Q, Q.streams, ARGV[13], tonumber(ARGV[4]))
end
if ARGV[5] ~= '' then redis.call('SPUBLISH', ARGV[5], ARGV[6] .. seq .. ARGV[7]) end
if #Q.evicted > 0 then return { seq, Q.evicted } end
return seq`);

// KEYS: hash, changes, set, the log's stream, clock, user-index marker, overlay, then the quota's three.
// ARGV: id, the final's JSON, the seq it was built from, '1' to log, log max, log ttl s, now ms, then a
// shard channel ('' for none) and the whole publication of its \`message:end\`, published once the
// marker is logged, then the quota's four. Returns false (not open), -1 (changed since the caller read
// it: build again) or the seq. Overlay fields of messages older than the oldest entry the log keeps are
// pruned here (UUIDv7 ids sort by time). The stream's bytes leave the quota; the final's join its
// conversation's.
const END = new LuaScript(`local now = tonumber(ARGV[7])${LUA_QUOTA}${LUA_FIND}${LUA_APPEND}
local Q = quota_of(8, 10)
local seq = redis.call('HGET', KEYS[1], 'seq')
if not seq then q_forget(Q, Q.streams, 's:', ARGV[1]); return false end
if seq ~= ARGV[3] then return -1 end
local final = ARGV[2]
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
q_forget(Q, Q.streams, 's:', ARGV[1])
if ARGV[4] == '1' then
  local max, ttl = tonumber(ARGV[5]), tonumber(ARGV[6])
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
if ARGV[8] ~= '' then redis.call('SPUBLISH', ARGV[8], ARGV[9]) end
return tonumber(seq)`);

// KEYS: hash, changes. Returns false or { m, client, owner, seq, changes }.
const GET = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local m = redis.call('HMGET', KEYS[1], 'm', 'client', 'owner', 'seq')
return { m[1], m[2], m[3], m[4], redis.call('GET', KEYS[2]) or '' }`);

// KEYS: the conversation's set. ARGV: the bot's key prefix. Returns { m, client, owner, seq, changes } per
// open stream (forgetting ids whose stream expired). The stream keys are built here: they share the set's slot.
const OPEN_OF = new LuaScript(`
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local hash = ARGV[1] .. ':stream:' .. id
  if redis.call('EXISTS', hash) == 1 then
    local m = redis.call('HMGET', hash, 'm', 'client', 'owner', 'seq')
    out[#out + 1] = { m[1], m[2], m[3], m[4], redis.call('GET', hash .. ':changes') or '' }
  else
    redis.call('SREM', KEYS[1], id)
  end
end
return out`);

type Row = [message: string, client: string, owner: string, seq: string, changes: string];

/** See {@link RedisStreamStore.prepare}. */
interface Prepared {
  /** Hash, changes, the conversation's set (a change that renews the expiry touches it), the quota's three. */
  keys: string[];
  quotaArgs: (string | number)[];
}

/** How often an end is built again when a change came between its read and its write. */
const END_ATTEMPTS = 5;

/** Open streams on Redis; see the layout above. */
export class RedisStreamStore implements StreamStore {
  private readonly orphanKey: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly log: RedisConversationLog,
  ) {
    this.orphanKey = `${prefix}${hashTag('streams')}:orphans`;
  }

  async open(record: StreamRecord, bounds: StreamBounds, logged: boolean): Promise<void> {
    const { message, clientId, owner } = record;
    const { agentId, id } = message;
    const keys = [...this.streamKeys(agentId, id, clientId), ...this.log.appendKeys(agentId, clientId)];
    const [, json, max, ttl] = this.log.appendArgs(id, streamStartJson(message));
    const args = [
      JSON.stringify(message),
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
    const held = controlKey(this.prefix, agentId, clientId);
    const opened = await OPEN.run<number | [number, string[]] | [-5, string]>(
      this.redis,
      [...keys, ...this.log.quotaKeys(agentId), held],
      args,
    );
    if (Array.isArray(opened) && opened[0] === -5) throw new ConversationHeldError(controlRecordOf(agentId, clientId, opened[1] as string));
    if (opened === -3) throw new QuotaExceededError(agentId, 'streams');
    if (opened === -4) throw new QuotaExceededError(agentId, 'bytes');
    const [result, evicted] = opened as [number, string[]];
    this.log.evicted(agentId, evicted);
    if (logged) await this.log.appended(agentId, clientId, result);
  }

  async append(
    stream: StreamTarget,
    change: EncodedChange,
    bounds: StreamBounds,
    publication: DeltaPublication | null,
    frame: ChangeFrame | null,
    renew: boolean,
  ): Promise<DeltaResult> {
    const prepared = this.prepare(stream);
    const published = publication !== null && frame !== null;
    const args = [
      change.record,
      change.bytes,
      bounds.maxBytes,
      renew ? bounds.ttlMs : '',
      published ? publication.channel : '',
      published ? publication.before + frame.head : '',
      published ? frame.tail + publication.after : '',
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
    // The final is built here from what the stream holds, and written only if nothing changed since
    // (an approval decided on another replica may come between): else read and build again.
    for (let attempt = 1; ; attempt++) {
      const open = await this.get(agentId, id);
      if (!open) return null;
      const { clientId } = open;
      const final = finalOf(open, ending);
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
      const publication = publicationFor?.(agentId, clientId) ?? null;
      const ended =
        publication === null ? '' : `${publication.before}${JSON.stringify(messageEnd(final, ending.status))}${publication.after}`;
      const args = [
        id,
        JSON.stringify(final),
        open.seq,
        logged ? '1' : '',
        maxMessages,
        ttlS,
        Date.now(),
        publication?.channel ?? '',
        ended,
        ...this.log.quotaArgs(agentId, clientId),
      ];
      const result = await END.run<number | null>(this.redis, keys, args);
      if (result === null) return null;
      if (result !== -1) return { final, seq: result, clientId, published: publication !== null };
      if (attempt === END_ATTEMPTS) throw new Error(`stream ${id} kept changing while it was being ended`);
    }
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
   * What every change of a stream shares: its keys. Built at its first change and kept on the
   * caller's target (the relay keeps one per stream), so a change builds only its own part.
   */
  private prepare(stream: StreamTarget): Prepared {
    const cached = stream.prepared as Prepared | undefined;
    if (cached) return cached;
    const keys = [...this.streamKeys(stream.agentId, stream.id, stream.clientId), ...this.log.quotaKeys(stream.agentId)];
    const prepared: Prepared = { keys, quotaArgs: this.log.quotaArgs(stream.agentId, stream.clientId) };
    stream.prepared = prepared;
    return prepared;
  }

  /** Hash, text and (when the conversation is known) the conversation's set of open streams. */
  private streamKeys(agentId: string, id: string, clientId: string | null): string[] {
    const hash = `${this.log.botKey(agentId)}:stream:${id}`;
    return clientId === null ? [hash, `${hash}:changes`, hash] : [hash, `${hash}:changes`, this.setKey(agentId, clientId)];
  }

  private setKey(agentId: string, clientId: string): string {
    return `${this.log.botKey(agentId)}:streams:${clientId}`;
  }
}

/** An agentId has no space (AGENT_ID_PATTERN). */
function member(ref: StreamRef): string {
  return `${ref.agentId} ${ref.id}`;
}

function parseRow([message, client, owner, seq, changes]: Row): OpenStream {
  const start = JSON.parse(message) as LoggedMessage;
  const { parts, text } = replayChanges(start, changes);
  return { message: start, clientId: client, owner, seq: Number(seq), text, parts };
}
