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
import { controlKey, controlRecordOf } from './redis-control.store';
import { decodeEntry, overlayIds, pageOf, replayOf, type LogEntry, type OverlayFields } from '../log-entries';
import { luaScript } from './lua-script';
import { fill } from '../json-frames';
import { QuotaExceededError, quotaOf, type BotQuota } from '../bot-quota';
import { schemaDefaults } from '../../config/config';
import { RedisQuota } from './redis-quota';

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

const APPEND = luaScript('log/append');

const APPEND_THEN_PUBLISH = luaScript('log/append-then-publish');

const APPEND_REPLY = luaScript('log/append-reply');

const READ_AFTER = luaScript('log/read-after');

/** Entries READ_AFTER returns at most per stream for `max` messages: a streamed message may take two (start, end marker). */
const afterCap = (max: number) => 2 * max + 2;

const READ_BEFORE = luaScript('log/read-before');

const SET_FEEDBACK = luaScript('log/set-feedback');

const FIND_MESSAGE = luaScript('log/find-message');

const REPLACE_MESSAGE = luaScript('log/replace-message');

const ERASE = luaScript('log/erase');

const MARK_INDEXED = luaScript('log/mark-indexed');

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
