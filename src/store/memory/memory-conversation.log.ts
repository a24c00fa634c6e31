import {
  mergeSorted,
  type ConversationLog,
  type ConversationLogLimits,
  type HistoryPage,
  type LoggedMessage,
  type Recovery,
} from '../conversation-log';
import type { MessageFeedback } from '../../protocol';
import { decodeEntry, endMarkerJson, overlayIds, pageOf, replayOf, streamStartJson, type OverlayFields } from '../log-entries';
import { LRUCache } from 'lru-cache';
import { jsonAroundString } from '../json-frames';
import { BufferPool, EntryRing } from './entry-ring';
import { SWEEP_EVERY_MS } from './slot-recency';

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

/**
 * One conversation's (or a bot's broadcasts') messages, oldest first, in an {@link EntryRing}: a full
 * log churns one message per append, and the ring keeps them outside the V8 heap, so appends leave
 * nothing for the old generation's collector. There is no index by id: appends, which happen on
 * every message, must not pay for one, and the reads that look an id up (recovery, history pages)
 * search from the newest entry, where the id they are given usually is.
 */
interface Log {
  agentId: string;
  clientId: string | null;
  entries: EntryRing;
  /** The ring's byte size as last counted in the log's total. */
  held: number;
  /** Seq of the newest entry trimmed away (0 when none): an id older than a gap cannot be recovered. */
  trimmedUpTo: number;
  /**
   * The greatest id appended (as a string): a message id above it is new without a search. Ids
   * are UUIDv7s from one stamper, so a fresh message's id is above it unless another message of
   * the conversation was stamped after it and logged first.
   */
  topId: string;
  /** Finals of streamed messages and feedback by message id (see store/log-entries.ts); pruned with the entries. */
  overlay: Map<string, OverlayFields>;
  /** UTF-8 bytes of the overlay's JSON strings, counted in the byte bound with the ring. */
  overlayBytes: number;
}

/** Entries read out of a log: `[seq, message json]` pairs, ascending. */
type Slice = [number, string][];

const bySeq = (x: Slice[number], y: Slice[number]) => x[0] - y[0];

/**
 * The embedded default's log: bounded in logs, messages and bytes, least recently used first, each log
 * expiring HISTORY_TTL_S after its last append. One sequence numbers every append, so a
 * conversation and the bot's broadcasts merge in the order they were written. Lost on restart.
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
  private sweptAt = 0;

  constructor(
    private readonly limits: ConversationLogLimits,
    bounds: MemoryLogBounds,
  ) {
    // One conversation always fits, whatever the bound over all of them says.
    this.maxMessages = Math.max(bounds.maxMessages, limits.maxMessages);
    this.maxBytes = bounds.maxBytes ?? Number.POSITIVE_INFINITY;
    this.pool = new BufferPool(Math.min(this.maxBytes / 8, POOL_MAX_BYTES));
    this.logs = new LRUCache<string, Log>({
      max: bounds.maxConversations,
      ttl: limits.ttlS * 1000,
      // Staleness is read from the clock on each check, with no timer to debounce it.
      ttlResolution: 0,
      dispose: (log) => {
        this.size -= log.entries.length;
        this.bytes -= log.held;
        log.entries.release();
      },
    });
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
    const log = this.push(agentId, clientId, final.id, endMarkerJson(final.id), false);
    setOverlay(log, final.id, { ...log.overlay.get(final.id), final: JSON.stringify(final) });
    prune(log);
    this.account(log);
  }

  async setFeedback(agentId: string, clientId: string, id: string, feedback: MessageFeedback | null): Promise<boolean> {
    const log = this.logs.get(logKey(agentId, clientId));
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
    // The log just appended to is the most recently used, so it goes last, and is never dropped
    // itself: it alone fits the message bound, and the byte bound gives way to it rather than lose
    // the message just written.
    while (this.logs.size > 1 && (this.size > this.maxMessages || this.bytes > this.maxBytes)) this.logs.pop();
  }

  /** Pushes an entry (its JSON `json + rest + after`); `once`: not when an entry of the id is in the log already. */
  private push(agentId: string, clientId: string | null, id: string, json: string, once: boolean, rest = '', after = ''): Log {
    const key = logKey(agentId, clientId);
    // An append restarts the log's TTL, a repeated one included.
    let log = this.logs.get(key, APPENDING);
    if (log === undefined) {
      log = newLog(agentId, clientId, this.limits.maxMessages, this.pool);
      this.logs.set(key, log);
    }
    this.sweep();
    if (id > log.topId) log.topId = id;
    else if (once && log.entries.positionOf(id) !== -1) return log;
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
    return this.logs.delete(key) && live;
  }

  async deleteUser(clientId: string): Promise<number> {
    let erased = 0;
    // dump() lists expired logs too: they are erased as well, yet not counted (they were gone already).
    for (const [key, { value }] of this.logs.dump()) {
      if (value.clientId !== clientId) continue;
      if (this.logs.has(key)) erased++;
      this.logs.delete(key);
    }
    return erased;
  }

  async close(): Promise<void> {
    this.logs.clear();
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
    return [this.logs.get(logKey(agentId, clientId)), this.logs.get(logKey(agentId, null))];
  }
}

/** Most bytes a log's pool of ring buffers keeps. */
const POOL_MAX_BYTES = 8 * 2 ** 20;

function newLog(agentId: string, clientId: string | null, maxMessages: number, pool: BufferPool): Log {
  return {
    agentId,
    clientId,
    entries: new EntryRing(maxMessages, pool),
    held: 0,
    trimmedUpTo: 0,
    topId: '',
    overlay: new Map(),
    overlayBytes: 0,
  };
}

function seqOf(log: Log | undefined, id: string): number | undefined {
  if (!log) return undefined;
  const position = log.entries.positionOf(id);
  return position === -1 ? undefined : log.entries.seqAt(position);
}

/** `\u0000` cannot occur in an agentId, so the two kinds of key never collide. */
function logKey(agentId: string, clientId: string | null): string {
  return clientId === null ? `${agentId}\u0000*` : `${agentId}\u0000c\u0000${clientId}`;
}

/** The entries of `log` with from <= seq < to. */
function slice(log: Log | undefined, from: number, to: number): Slice {
  if (!log) return [];
  const out: Slice = [];
  const { entries } = log;
  for (let position = entries.firstAtLeast(from); position < entries.length; position++) {
    const seq = entries.seqAt(position);
    if (seq >= to) break;
    out.push([seq, entries.jsonAt(position)]);
  }
  return out;
}

const entryOf = (entry: Slice[number]) => decodeEntry(entry[1]);

/** Position of the entry of message `id` (its start for a streamed one, never its end marker), or -1. */
function messagePosition(log: Log, id: string): number {
  const { entries } = log;
  for (let position = entries.positionOf(id); position >= 0; position--) {
    if (entries.idAt(position) === id && !entries.jsonAt(position).startsWith('{"endOf"')) return position;
  }
  return -1;
}

function overlayOf(log: Log | undefined, ids: readonly string[]): Map<string, OverlayFields> {
  const out = new Map<string, OverlayFields>();
  if (!log) return out;
  for (const id of ids) {
    const fields = log.overlay.get(id);
    if (fields) out.set(id, fields);
  }
  return out;
}

/** Drops overlay fields of messages older than the oldest entry kept (UUIDv7 ids sort by time). */
function prune(log: Log): void {
  const oldest = log.entries.length === 0 ? null : log.entries.idAt(0);
  for (const id of log.overlay.keys()) if (oldest === null || id < oldest) setOverlay(log, id, undefined);
}

/** Sets (or, with undefined, deletes) the overlay fields of `id`, keeping {@link Log.overlayBytes}. */
function setOverlay(log: Log, id: string, fields: OverlayFields | undefined): void {
  log.overlayBytes -= overlayFieldBytes(log.overlay.get(id));
  if (fields === undefined) log.overlay.delete(id);
  else log.overlay.set(id, fields);
  log.overlayBytes += overlayFieldBytes(fields);
}

function overlayFieldBytes(fields: OverlayFields | undefined): number {
  if (!fields) return 0;
  return Buffer.byteLength(fields.final ?? '') + Buffer.byteLength(fields.feedback ?? '');
}
