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

interface Entry {
  seq: number;
  message: LoggedMessage;
}

interface Log {
  agentId: string;
  clientId: string | null;
  entries: Entry[];
  /** Message id → seq, for recovery and paging by id. */
  seqs: Map<string, number>;
  /** Seq of the newest entry trimmed away (0 when none): an id older than a gap cannot be recovered. */
  trimmedUpTo: number;
}

const bySeq = (x: Entry, y: Entry) => x.seq - y.seq;

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
      sizeCalculation: (log) => Math.max(1, log.entries.length),
      ttl: limits.ttlS * 1000,
    });
  }

  async append(agentId: string, clientId: string | null, message: LoggedMessage): Promise<void> {
    const key = logKey(agentId, clientId);
    const log = this.logs.get(key) ?? { agentId, clientId, entries: [], seqs: new Map<string, number>(), trimmedUpTo: 0 };
    if (log.seqs.has(message.id)) return;
    const seq = ++this.seq;
    log.entries.push({ seq, message });
    log.seqs.set(message.id, seq);
    while (log.entries.length > this.limits.maxMessages) {
      const dropped = log.entries.shift() as Entry;
      log.seqs.delete(dropped.message.id);
      log.trimmedUpTo = dropped.seq;
    }
    // Set again, as a new object (lru-cache keeps the old size when the same value is set again):
    // recomputes the log's size for the message bound and restarts its TTL.
    this.logs.set(key, { ...log });
  }

  async readAfter(agentId: string, clientId: string, afterId: string, max: number): Promise<Recovery> {
    const [own, shared] = this.pair(agentId, clientId);
    const from = own?.seqs.get(afterId) ?? shared?.seqs.get(afterId);
    if (from === undefined) return { ok: false, reason: 'unknown' };
    if ((own?.trimmedUpTo ?? 0) > from || (shared?.trimmedUpTo ?? 0) > from) return { ok: false, reason: 'unknown' };
    const after = mergeSorted(newerThan(own, from), newerThan(shared, from), bySeq);
    if (after.length > max) return { ok: false, reason: 'too-many' };
    return { ok: true, messages: after.map((e) => e.message) };
  }

  async readBefore(agentId: string, clientId: string, before: string | undefined, limit: number): Promise<HistoryPage> {
    const [own, shared] = this.pair(agentId, clientId);
    let below = Number.POSITIVE_INFINITY;
    if (before !== undefined) {
      const seq = own?.seqs.get(before) ?? shared?.seqs.get(before);
      if (seq === undefined) return { messages: [], hasMore: false };
      below = seq;
    }
    const older = mergeSorted(olderThan(own, below), olderThan(shared, below), bySeq);
    return { messages: older.slice(-limit).map((e) => e.message), hasMore: older.length > limit };
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

function newerThan(log: Log | undefined, seq: number): Entry[] {
  return log ? log.entries.filter((e) => e.seq > seq) : [];
}

function olderThan(log: Log | undefined, seq: number): Entry[] {
  return log ? log.entries.filter((e) => e.seq < seq) : [];
}
