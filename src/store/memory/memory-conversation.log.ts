import { LRUCache } from 'lru-cache';
import {
  mergeSorted,
  type ConversationLog,
  type ConversationLogLimits,
  type HistoryPage,
  type LoggedMessage,
  type Recovery,
} from '../conversation-log';

/** Bounds of the embedded log over all conversations. */
export interface MemoryLogBounds {
  /** Logs kept (conversations and bots' broadcast logs), least recently used dropped first. */
  maxConversations: number;
  /** Messages kept over all logs, least recently used logs dropped first. */
  maxMessages: number;
}

/**
 * One conversation's (or a bot's broadcasts') messages, oldest first. A full log churns one message
 * per append, and each lives long enough to reach the old generation, where every object costs the
 * garbage collector's marking threads; so an entry keeps two objects: its id (the index's key too)
 * and the message as one JSON string, which has no references to trace. The message object, its
 * text and clientMessageId die young. Seqs are small integers in a parallel array. The arrays grow
 * to HISTORY_MAX_MESSAGES and then turn into rings: a full log overwrites its oldest entry in place
 * instead of shifting every entry down (a log is touched rarely enough to be out of the CPU's cache,
 * and a shift moves all of it).
 */
interface Log {
  agentId: string;
  clientId: string | null;
  /** Message id → seq. */
  index: Map<string, number>;
  /** Seq of each message, ascending from `head` (round the end of the array once it is full). */
  seqs: number[];
  /** Id of each message, parallel to `seqs`. */
  ids: string[];
  /** Each message as JSON, parallel to `seqs`; parsed when read (recovery and history, not appends). */
  messages: string[];
  /** Where the oldest entry is: 0 until the arrays are full. */
  head: number;
  /** Seq of the newest entry trimmed away (0 when none): an id older than a gap cannot be recovered. */
  trimmedUpTo: number;
}

/** Entries read out of a log: `[seq, message json]` pairs, ascending. */
type Slice = [number, string][];

const bySeq = (x: Slice[number], y: Slice[number]) => x[0] - y[0];

/**
 * The embedded default's log: bounded in logs and messages, least recently used first, each log
 * expiring HISTORY_TTL_S after its last append. One sequence numbers every append, so a
 * conversation and the bot's broadcasts merge in the order they were written. Lost on restart.
 */
export class MemoryConversationLog implements ConversationLog {
  private seq = 0;
  private readonly logs: LRUCache<string, Log>;

  constructor(
    private readonly limits: ConversationLogLimits,
    bounds: MemoryLogBounds,
  ) {
    this.logs = new LRUCache<string, Log>({
      max: bounds.maxConversations,
      maxSize: Math.max(bounds.maxMessages, limits.maxMessages),
      sizeCalculation: (log) => Math.max(1, log.seqs.length),
      ttl: limits.ttlS * 1000,
    });
  }

  async append(agentId: string, clientId: string | null, message: LoggedMessage): Promise<void> {
    const key = logKey(agentId, clientId);
    // An append restarts the log's TTL.
    const log: Log = this.logs.get(key, { updateAgeOnGet: true }) ?? {
      agentId,
      clientId,
      index: new Map(),
      seqs: [],
      ids: [],
      messages: [],
      head: 0,
      trimmedUpTo: 0,
    };
    if (log.index.has(message.id)) return;
    const seq = ++this.seq;
    log.index.set(message.id, seq);
    const json = JSON.stringify(message);
    if (log.seqs.length === this.limits.maxMessages) {
      // Full: the newest takes the oldest's place, so the size the cache counted still holds.
      const at = log.head;
      log.trimmedUpTo = log.seqs[at];
      log.index.delete(log.ids[at]);
      log.seqs[at] = seq;
      log.ids[at] = message.id;
      log.messages[at] = json;
      log.head = (at + 1) % log.seqs.length;
      return;
    }
    log.seqs.push(seq);
    log.ids.push(message.id);
    log.messages.push(json);
    // Grown: set again, as a new object (lru-cache keeps the old size when the same value is set
    // again), so the bound over all logs counts the new message.
    this.logs.set(key, { ...log });
  }

  async readAfter(agentId: string, clientId: string, afterId: string, max: number): Promise<Recovery> {
    const [own, shared] = this.pair(agentId, clientId);
    const from = own?.index.get(afterId) ?? shared?.index.get(afterId);
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
      const seq = own?.index.get(before) ?? shared?.index.get(before);
      if (seq === undefined) return { messages: [], hasMore: false };
      below = seq;
    }
    const older = mergeSorted(slice(own, 0, below), slice(shared, 0, below), bySeq);
    return { messages: older.slice(-limit).map(messageOf), hasMore: older.length > limit };
  }

  async deleteConversation(agentId: string, clientId: string): Promise<boolean> {
    return this.logs.delete(logKey(agentId, clientId));
  }

  async deleteUser(clientId: string): Promise<number> {
    const keys: string[] = [];
    for (const [key, log] of this.logs.entries()) if (log.clientId === clientId) keys.push(key);
    for (const key of keys) this.logs.delete(key);
    return keys.length;
  }

  async close(): Promise<void> {
    this.logs.clear();
  }

  private pair(agentId: string, clientId: string): [Log | undefined, Log | undefined] {
    return [this.logs.get(logKey(agentId, clientId)), this.logs.get(logKey(agentId, null))];
  }
}

/** `\u0000` cannot occur in an agentId, so the two kinds of key never collide. */
function logKey(agentId: string, clientId: string | null): string {
  return clientId === null ? `${agentId}\u0000*` : `${agentId}\u0000c\u0000${clientId}`;
}

/** The entries of `log` with from <= seq < to. */
function slice(log: Log | undefined, from: number, to: number): Slice {
  if (!log) return [];
  const out: Slice = [];
  const n = log.seqs.length;
  for (let i = firstAtLeast(log, from); i < n; i++) {
    const at = (log.head + i) % n;
    if (log.seqs[at] >= to) break;
    out.push([log.seqs[at], log.messages[at]]);
  }
  return out;
}

/** Position (0 = oldest) of the first entry of `log` whose seq is >= `value` (its length when none is). */
function firstAtLeast(log: Log, value: number): number {
  const n = log.seqs.length;
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (log.seqs[(log.head + mid) % n] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const messageOf = (entry: Slice[number]) => JSON.parse(entry[1]) as LoggedMessage;
