import {
  mergeSorted,
  type ConversationLog,
  type ConversationLogLimits,
  type HistoryPage,
  type LoggedMessage,
  type Recovery,
} from '../conversation-log';
import { EntryRing } from './entry-ring';
import { RecencyList, type Listed } from './recency-list';

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
interface Log extends Listed<Log> {
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
  private readonly logs = new RecencyList<Log>((log) => {
    this.size -= log.entries.length;
    this.bytes -= log.held;
  });
  private readonly maxMessages: number;
  private readonly maxBytes: number;
  private readonly ttlMs: number;
  /**
   * Whether the logs are over a bound. The log just appended to is the most recently used, so it
   * goes last, and is never dropped itself: it alone fits the message bound, and the byte bound
   * gives way to it rather than lose the message just written.
   */
  private readonly over = () =>
    this.logs.size > 1 && (this.size > this.maxMessages || this.bytes > this.maxBytes || this.logs.size > this.bounds.maxConversations);

  constructor(
    private readonly limits: ConversationLogLimits,
    private readonly bounds: MemoryLogBounds,
  ) {
    // One conversation always fits, whatever the bound over all of them says.
    this.maxMessages = Math.max(bounds.maxMessages, limits.maxMessages);
    this.maxBytes = bounds.maxBytes ?? Number.POSITIVE_INFINITY;
    this.ttlMs = limits.ttlS * 1000;
  }

  /** Bytes held by every log's ring (buffers and slot arrays). */
  get byteSize(): number {
    return this.bytes;
  }

  async append(agentId: string, clientId: string | null, message: LoggedMessage): Promise<void> {
    this.appendNow(agentId, clientId, message);
  }

  /** {@link append} without the promise, for the store's own intake. */
  appendNow(agentId: string, clientId: string | null, message: LoggedMessage): void {
    const now = Date.now();
    const key = logKey(agentId, clientId);
    const found = this.logs.peek(key, now);
    const log = found ?? newLog(key, agentId, clientId, this.limits.maxMessages);
    // An append restarts the log's TTL, a repeated one included.
    log.expiresAt = now + this.ttlMs;
    if (found) this.logs.touch(log);
    else this.logs.add(log);
    this.logs.sweep(now);
    const { id } = message;
    if (id > log.topId) log.topId = id;
    else if (log.entries.positionOf(id) !== -1) return;
    // Full, the newest takes the oldest's place.
    const trimmed = log.entries.push(++this.seq, id, JSON.stringify(message));
    const held = log.entries.byteSize;
    this.bytes += held - log.held;
    log.held = held;
    if (trimmed !== 0) log.trimmedUpTo = trimmed;
    else this.size++;
    // Also when a full log trimmed its oldest: a larger message may have grown its buffer.
    this.logs.trim(this.over);
  }

  async readAfter(agentId: string, clientId: string, afterId: string, max: number): Promise<Recovery> {
    const [own, shared] = this.pair(agentId, clientId);
    const from = seqOf(own, afterId) ?? seqOf(shared, afterId);
    if (from === undefined) return { ok: false, reason: 'unknown' };
    if ((own?.trimmedUpTo ?? 0) > from || (shared?.trimmedUpTo ?? 0) > from) return { ok: false, reason: 'unknown' };
    const after = mergeSorted(slice(own, from + 1, Infinity), slice(shared, from + 1, Infinity), bySeq);
    if (after.length > max) return { ok: false, reason: 'too-many' };
    return { ok: true, messages: after.map(messageOf) };
  }

  async readBefore(agentId: string, clientId: string, before: string | undefined, limit: number): Promise<HistoryPage> {
    const [own, shared] = this.pair(agentId, clientId);
    let below = Number.POSITIVE_INFINITY;
    if (before !== undefined) {
      const seq = seqOf(own, before) ?? seqOf(shared, before);
      if (seq === undefined) return { messages: [], hasMore: false };
      below = seq;
    }
    const older = mergeSorted(slice(own, 0, below), slice(shared, 0, below), bySeq);
    return { messages: older.slice(-limit).map(messageOf), hasMore: older.length > limit };
  }

  async deleteConversation(agentId: string, clientId: string): Promise<boolean> {
    const key = logKey(agentId, clientId);
    return this.logs.peek(key, Date.now()) !== undefined && this.logs.delete(key);
  }

  async deleteUser(clientId: string): Promise<number> {
    const now = Date.now();
    const keys: string[] = [];
    for (const log of this.logs.values()) if (log.clientId === clientId) keys.push(log.key);
    // An expired log is erased too, yet not counted: it was gone already.
    return keys.filter((key) => this.logs.peek(key, now) !== undefined && this.logs.delete(key)).length;
  }

  async close(): Promise<void> {
    this.logs.clear();
    this.size = 0;
    this.bytes = 0;
  }

  /** A conversation's log and the bot's broadcasts, both made the most recently used. */
  private pair(agentId: string, clientId: string): [Log | undefined, Log | undefined] {
    const now = Date.now();
    return [this.logs.get(logKey(agentId, clientId), now), this.logs.get(logKey(agentId, null), now)];
  }
}

function newLog(key: string, agentId: string, clientId: string | null, maxMessages: number): Log {
  return {
    key,
    agentId,
    clientId,
    entries: new EntryRing(maxMessages),
    held: 0,
    trimmedUpTo: 0,
    topId: '',
    expiresAt: 0,
    older: null,
    newer: null,
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

const messageOf = (entry: Slice[number]) => JSON.parse(entry[1]) as LoggedMessage;
