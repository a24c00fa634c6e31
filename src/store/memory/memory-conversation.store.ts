import { ConversationHeldError } from '../control-store';
import { MemoryControlStore } from './memory-control.store';
import type { ControlState } from '../../protocol';
import {
  mergeSorted,
  type ConversationLog,
  type ConversationLogLimits,
  type HistoryPage,
  type LoggedMessage,
  type Recovery,
} from '../conversation-log';
import type { MessageFeedback } from '../../protocol';
import { decodeEntry, endMarkerJson, overlayIds, pageOf, replayOf, streamStartJson } from '../log-entries';
import { LRUCache } from 'lru-cache';
import { jsonAroundString } from '../json-frames';
import { BufferPool } from './entry-ring';
import { bySeq, entryOf, logKey, messagePosition, newLog, overlayOf, prune, seqOf, setOverlay, slice, type Log } from './memory-log';
import { SWEEP_EVERY_MS } from './slot-recency';
import { QUOTA_ENTRY_OVERHEAD, QuotaExceededError, quotaOf, type BotQuota } from '../bot-quota';
import { schemaDefaults } from '../../config/config';

/** A read that restarts the log's lifetime: an append's. */
const APPENDING: LRUCache.GetOptions<string, Log, unknown> = { updateAgeOnGet: true };

/** Bounds of the embedded log over all conversations. */
export interface MemoryLogBounds {
  /** Logs kept (conversations and bots' broadcast logs), least recently used dropped first. */
  maxConversations: number;
  /** Messages kept over all logs, least recently used logs dropped first. */
  maxMessages: number;
  /**
   * Bytes of all logs' rings (their buffers, used or not, and slot arrays), least recently used
   * logs dropped first; the log just appended to is kept whatever its size. Unbounded when absent.
   */
  maxBytes?: number;
}

/** One bot's logs, least recently used first, and the bytes they hold (its quota's share of the log). */
interface BotLogs {
  logs: Map<string, Log>;
  bytes: number;
}

/**
 * The embedded default's log: bounded per bot by its quota (BOT_STORAGE_MAX_BYTES with its open
 * streams' text, BOT_MAX_CONVERSATIONS), each bot making room by dropping its own least recently
 * used logs, and over all bots in logs, messages and bytes as a safety net that takes from the
 * bot holding the most bytes; each log expires HISTORY_TTL_S after its last append. One sequence
 * numbers every append, so a conversation and the bot's broadcasts merge in the order they were
 * written. Lost on restart.
 */
export class MemoryConversationLog implements ConversationLog {
  private seq = 0;
  /** Messages over all logs. */
  private size = 0;
  /** Bytes of all logs' rings. */
  private bytes = 0;
  /** Buffers of dropped logs and of rings that grew, for the next ring that grows: an eighth of the byte bound, at most 8 MiB. */
  private readonly pool: BufferPool;
  /**
   * Logs by key, least recently used first, each for ttlS after its last append (a read moves a log
   * up without extending its lifetime), at most maxConversations of them; `dispose` hears of every
   * log that leaves, to keep the totals and hand its buffers to the pool.
   */
  private readonly logs: LRUCache<string, Log>;
  private readonly maxMessages: number;
  private readonly maxBytes: number;
  private readonly maxConversations: number;
  private sweptAt = 0;
  /** Each bot's logs, for its quota; a bot leaves the map with its last log. */
  private readonly bots = new Map<string, BotLogs>();
  /** The bytes of a bot's open streams, counted in its quota with its logs (the stream store tells). */
  private streamBytes: (agentId: string) => number = () => 0;
  /** Told of every conversation erased on request (not dropped by a bound), so its open streams go too; agentId null: with every bot. */
  private readonly erasures: ((agentId: string | null, clientId: string) => void)[] = [];

  constructor(
    private readonly limits: ConversationLogLimits,
    bounds: MemoryLogBounds,
    /** What one bot may hold (BOT_STORAGE_MAX_BYTES, BOT_MAX_CONVERSATIONS; their defaults when unset). */
    private readonly quota: BotQuota = quotaOf(schemaDefaults()),
    /** Who answers each conversation: a bot's reply is refused while an operator holds it. */
    readonly control: MemoryControlStore = new MemoryControlStore(),
  ) {
    // One conversation always fits, whatever the bound over all of them says.
    this.maxMessages = Math.max(bounds.maxMessages, limits.maxMessages);
    this.maxBytes = bounds.maxBytes ?? Number.POSITIVE_INFINITY;
    this.maxConversations = bounds.maxConversations;
    this.pool = new BufferPool(Math.min(this.maxBytes / 8, POOL_MAX_BYTES));
    this.logs = new LRUCache<string, Log>({
      // One above the bound: the log drops logs itself (never another bot's for a bot's own sake),
      // so the cache never has to pick one by its global recency.
      max: bounds.maxConversations + 1,
      ttl: limits.ttlS * 1000,
      // Staleness is read from the clock on each check, with no timer to debounce it.
      ttlResolution: 0,
      dispose: (log, key) => {
        this.size -= log.entries.length;
        this.bytes -= log.held;
        const bot = this.bots.get(log.agentId);
        if (bot?.logs.get(key) === log) {
          bot.logs.delete(key);
          bot.bytes -= log.counted;
          if (bot.logs.size === 0) this.bots.delete(log.agentId);
        }
        log.entries.release();
      },
    });
  }

  /** Counts `bytes(agentId)`, a bot's open streams, in its quota with its logs: the stream store's. */
  countStreams(bytes: (agentId: string) => number): void {
    this.streamBytes = bytes;
  }

  /** Hears of each conversation erased on request (deleteConversation, deleteUser). */
  onErase(listener: (agentId: string | null, clientId: string) => void): void {
    this.erasures.push(listener);
  }

  /** Bytes the logs of `agentId` hold. */
  bytesOf(agentId: string): number {
    return this.bots.get(agentId)?.bytes ?? 0;
  }

  /**
   * Makes room in the quota of `agentId` for `need` more bytes (and for a new log when `adding`)
   * by dropping the bot's least recently used logs, never the log of `clientId` (null: its
   * broadcasts) and never another bot's; false, nothing dropped, when they would not fit even then.
   */
  reserve(agentId: string, clientId: string | null, need: number, adding = false): boolean {
    const bot = this.bots.get(agentId);
    const streams = this.streamBytes(agentId);
    if (!bot) return streams + need <= this.quota.maxBytes && (!adding || this.quota.maxConversations > 0);
    const keep = logKey(agentId, clientId);
    const over = () => bot.bytes + streams + need > this.quota.maxBytes || (adding && bot.logs.size >= this.quota.maxConversations);
    if (!over()) return true;
    // What no drop can free (open streams, the log kept): refused, nothing dropped.
    if (streams + (bot.logs.get(keep)?.counted ?? 0) + need > this.quota.maxBytes) return false;
    for (const key of bot.logs.keys()) {
      if (!over()) break;
      if (key !== keep) this.logs.delete(key);
    }
    return !over();
  }

  /** Bytes held by every log's ring (buffers and slot arrays). */
  get byteSize(): number {
    return this.bytes;
  }

  /** Bytes of ring buffers kept for reuse, outside {@link byteSize} and the byte bound. */
  get pooledBytes(): number {
    return this.pool.byteSize;
  }

  async append(agentId: string, clientId: string | null, message: LoggedMessage): Promise<void> {
    this.appendNow(agentId, clientId, message);
  }

  async appendReply(agentId: string, clientId: string, message: LoggedMessage): Promise<{ published: boolean; control: ControlState }> {
    const record = this.control.read(agentId, clientId);
    if (record.state === 'human') throw new ConversationHeldError(record);
    this.appendNow(agentId, clientId, message);
    return { published: false, control: record.state };
  }

  /** {@link append} without the promise, for the store's own intake. */
  appendNow(agentId: string, clientId: string | null, message: LoggedMessage): void {
    // A long text goes into the ring as it is, not copied into the message's JSON first.
    const around = jsonAroundString(message, 'text');
    if (around === null) this.push(agentId, clientId, message.id, JSON.stringify(message), true);
    else this.push(agentId, clientId, message.id, around.before, true, message.text, around.after);
  }

  /** Appends the start of a streamed message (text ''), its final coming later with {@link endStreamNow}. */
  startStreamNow(agentId: string, clientId: string, message: LoggedMessage): void {
    this.push(agentId, clientId, message.id, streamStartJson(message), true);
  }

  /** Records the final of a streamed message and appends its end marker (the position replays use). */
  endStreamNow(agentId: string, clientId: string, final: LoggedMessage): void {
    // An end is never refused: the stream's text it replaces was counted in the quota already.
    const log = this.push(agentId, clientId, final.id, endMarkerJson(final.id), false, '', '', false);
    setOverlay(log, final.id, { ...log.overlay.get(final.id), final: JSON.stringify(final) });
    prune(log);
    this.account(log);
  }

  async setFeedback(agentId: string, clientId: string, id: string, feedback: MessageFeedback | null): Promise<boolean> {
    const log = this.used(logKey(agentId, clientId));
    if (!log) return false;
    const position = messagePosition(log, id);
    if (position === -1) return false;
    const entry = decodeEntry(log.entries.jsonAt(position));
    if (entry.kind === 'end' || entry.message.author !== 'agent') return false;
    setOverlay(log, id, { ...log.overlay.get(id), feedback: feedback === null ? null : JSON.stringify(feedback) });
    prune(log);
    this.account(log);
    return true;
  }

  async findBotMessage(agentId: string, clientId: string, id: string): Promise<LoggedMessage | null> {
    const log = this.logs.get(logKey(agentId, clientId));
    if (!log) return null;
    const position = messagePosition(log, id);
    if (position === -1) return null;
    const entry = decodeEntry(log.entries.jsonAt(position));
    if (entry.kind === 'end' || entry.message.author !== 'agent') return null;
    const final = log.overlay.get(id)?.final;
    return final ? (JSON.parse(final) as LoggedMessage) : entry.message;
  }

  async replaceBotMessage(agentId: string, clientId: string, message: LoggedMessage): Promise<boolean> {
    if ((await this.findBotMessage(agentId, clientId, message.id)) === null) return false;
    const log = this.logs.get(logKey(agentId, clientId))!;
    setOverlay(log, message.id, { ...log.overlay.get(message.id), final: JSON.stringify(message) });
    this.account(log);
    return true;
  }

  /**
   * Counts what `log` holds now (its ring, and the finals and feedback beside it) and drops the
   * least recently used logs while the bounds are exceeded: also after a full log trimmed its
   * oldest, since a larger message may have grown its buffer.
   */
  private account(log: Log): void {
    const held = log.entries.byteSize + log.overlayBytes;
    this.bytes += held - log.held;
    log.held = held;
    const counted = log.entries.liveBytes() + log.entries.length * QUOTA_ENTRY_OVERHEAD + log.overlayBytes;
    const bot = this.bots.get(log.agentId);
    if (bot) bot.bytes += counted - log.counted;
    log.counted = counted;
    // A final or feedback is counted once written (an end is never refused): the bot's other logs make up for it.
    this.reserve(log.agentId, log.clientId, 0);
    // The log just appended to is never dropped itself: it alone fits the message bound, and the
    // byte bound gives way to it rather than lose the message just written.
    while (this.logs.size > 1 && (this.size > this.maxMessages || this.bytes > this.maxBytes)) {
      if (!this.dropFromLargest(log, byBytes)) break;
    }
  }

  /**
   * The bounds over all bots, a safety net under the quotas: drops the least recently used log
   * of the bot holding the most by `size` (bytes for the byte and message bounds, logs for the
   * count), not `current`, so a bot that fills the log takes from its own logs first. False when
   * there is none to drop.
   */
  private dropFromLargest(current: Log | null, size: (bot: BotLogs) => number): boolean {
    let largest: BotLogs | undefined;
    for (const bot of this.bots.values()) {
      const others = bot.logs.size - (current !== null && bot.logs.get(logKey(current.agentId, current.clientId)) === current ? 1 : 0);
      if (others > 0 && (!largest || size(bot) > size(largest))) largest = bot;
    }
    if (!largest) return false;
    for (const [key, log] of largest.logs) {
      if (log === current) continue;
      this.logs.delete(key);
      return true;
    }
    return false;
  }

  /**
   * Pushes an entry (its JSON `json + rest + after`); `once`: not when an entry of the id is in the
   * log already. Throws {@link QuotaExceededError} when the bot's quota has no room for it, unless
   * not `refusable`.
   */
  private push(
    agentId: string,
    clientId: string | null,
    id: string,
    json: string,
    once: boolean,
    rest = '',
    after = '',
    refusable = true,
  ): Log {
    const key = logKey(agentId, clientId);
    // An append restarts the log's TTL, a repeated one included.
    let log = this.used(key, APPENDING);
    this.sweep();
    if (log !== undefined && once && id <= log.topId && log.entries.positionOf(id) !== -1) return log;
    const need = QUOTA_ENTRY_OVERHEAD + id.length + Buffer.byteLength(json) + Buffer.byteLength(rest) + Buffer.byteLength(after);
    if (!this.reserve(agentId, clientId, need, log === undefined) && refusable) throw new QuotaExceededError(agentId, 'bytes');
    let bot = this.bots.get(agentId);
    if (!bot) this.bots.set(agentId, (bot = { logs: new Map(), bytes: 0 }));
    if (log === undefined) {
      if (this.logs.size >= this.maxConversations) {
        this.logs.purgeStale();
        if (this.logs.size >= this.maxConversations) this.dropFromLargest(null, byLogs);
      }
      log = newLog(agentId, clientId, this.limits.maxMessages, this.pool);
      this.logs.set(key, log);
      bot.logs.set(key, log);
    }
    if (id > log.topId) log.topId = id;
    // Full, the newest takes the oldest's place.
    const trimmed = log.entries.push(++this.seq, id, json, rest, after);
    if (trimmed !== 0) log.trimmedUpTo = trimmed;
    else this.size++;
    this.account(log);
    return log;
  }

  async readAfter(agentId: string, clientId: string, afterId: string, max: number): Promise<Recovery> {
    const [own, shared] = this.pair(agentId, clientId);
    const from = seqOf(own, afterId) ?? seqOf(shared, afterId);
    if (from === undefined) return { ok: false, reason: 'unknown' };
    if ((own?.trimmedUpTo ?? 0) > from || (shared?.trimmedUpTo ?? 0) > from) return { ok: false, reason: 'unknown' };
    const after = mergeSorted(slice(own, from + 1, Infinity), slice(shared, from + 1, Infinity), bySeq).map(entryOf);
    const messages = replayOf(after, overlayOf(own, overlayIds(after)));
    if (messages.length > max) return { ok: false, reason: 'too-many' };
    return { ok: true, messages };
  }

  async readBefore(agentId: string, clientId: string, before: string | undefined, limit: number): Promise<HistoryPage> {
    const [own, shared] = this.pair(agentId, clientId);
    let below = Number.POSITIVE_INFINITY;
    if (before !== undefined) {
      const position = own ? messagePosition(own, before) : -1;
      const seq = position !== -1 ? own!.entries.seqAt(position) : seqOf(shared, before);
      if (seq === undefined) return { messages: [], hasMore: false };
      below = seq;
    }
    const older = mergeSorted(slice(own, 0, below), slice(shared, 0, below), bySeq)
      .map(entryOf)
      .filter((entry) => entry.kind !== 'end');
    const page = older.slice(-limit);
    return { messages: pageOf(page, overlayOf(own, overlayIds(page))), hasMore: older.length > limit };
  }

  async deleteConversation(agentId: string, clientId: string): Promise<boolean> {
    const key = logKey(agentId, clientId);
    // An expired log is erased too, yet not counted: it was gone already.
    const live = this.logs.has(key);
    const erased = this.logs.delete(key) && live;
    for (const listener of this.erasures) listener(agentId, clientId);
    return erased;
  }

  async deleteUser(clientId: string): Promise<number> {
    let erased = 0;
    // dump() lists expired logs too: they are erased as well, yet not counted (they were gone already).
    for (const [key, { value }] of this.logs.dump()) {
      if (value.clientId !== clientId) continue;
      if (this.logs.has(key)) erased++;
      this.logs.delete(key);
    }
    for (const listener of this.erasures) listener(null, clientId);
    return erased;
  }

  async close(): Promise<void> {
    this.logs.clear();
    this.bots.clear();
    this.pool.clear();
    this.size = 0;
    this.bytes = 0;
  }

  /**
   * Drops expired logs, at most once per {@link SWEEP_EVERY_MS}: a walk over all of them (at most
   * maxConversations), where reads would find only those they ask for.
   */
  private sweep(): void {
    const now = Date.now();
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    this.logs.purgeStale();
  }

  /** A conversation's log and the bot's broadcasts, both made the most recently used. */
  private pair(agentId: string, clientId: string): [Log | undefined, Log | undefined] {
    return [this.used(logKey(agentId, clientId)), this.used(logKey(agentId, null))];
  }

  /** A log, made the most recently used over all bots and among its bot's (the order its quota drops them in). */
  private used(key: string, options?: LRUCache.GetOptions<string, Log, unknown>): Log | undefined {
    const log = this.logs.get(key, options);
    const bot = log && this.bots.get(log.agentId);
    if (bot?.logs.delete(key)) bot.logs.set(key, log!);
    return log;
  }
}

const byBytes = (bot: BotLogs) => bot.bytes;
const byLogs = (bot: BotLogs) => bot.logs.size;

/** Most bytes a log's pool of ring buffers keeps. */
const POOL_MAX_BYTES = 8 * 2 ** 20;
