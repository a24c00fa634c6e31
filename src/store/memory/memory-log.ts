import type { BufferPool } from './entry-ring';
import { EntryRing } from './entry-ring';
import { decodeEntry, type OverlayFields } from '../log-entries';

// One log of the embedded store's conversation log (memory-conversation.store.ts): its ring of entries,
// its overlay of finals and feedback, and the reads over them.

/**
 * One conversation's (or a bot's broadcasts') messages, oldest first, in an {@link EntryRing}: a full
 * log churns one message per append, and the ring keeps them outside the V8 heap, so appends leave
 * nothing for the old generation's collector. There is no index by id: appends, which happen on
 * every message, must not pay for one, and the reads that look an id up (recovery, history pages)
 * search from the newest entry, where the id they are given usually is.
 */
export interface Log {
  agentId: string;
  clientId: string | null;
  entries: EntryRing;
  /** The ring's byte size as last counted in the log's total. */
  held: number;
  /**
   * What the log counts in its bot's quota, as last counted: its entries (not the buffer's free
   * space) and overlay, and QUOTA_ENTRY_OVERHEAD an entry, as Redis counts them.
   */
  counted: number;
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
export type Slice = [number, string][];

export const bySeq = (x: Slice[number], y: Slice[number]) => x[0] - y[0];

export function newLog(agentId: string, clientId: string | null, maxMessages: number, pool: BufferPool): Log {
  return {
    agentId,
    clientId,
    entries: new EntryRing(maxMessages, pool),
    held: 0,
    counted: 0,
    trimmedUpTo: 0,
    topId: '',
    overlay: new Map(),
    overlayBytes: 0,
  };
}

export function seqOf(log: Log | undefined, id: string): number | undefined {
  if (!log) return undefined;
  const position = log.entries.positionOf(id);
  return position === -1 ? undefined : log.entries.seqAt(position);
}

/** `\u0000` cannot occur in an agentId, so the two kinds of key never collide. */
export function logKey(agentId: string, clientId: string | null): string {
  return clientId === null ? `${agentId}\u0000*` : `${agentId}\u0000c\u0000${clientId}`;
}

/** The entries of `log` with from <= seq < to. */
export function slice(log: Log | undefined, from: number, to: number): Slice {
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

export const entryOf = (entry: Slice[number]) => decodeEntry(entry[1]);

/** Position of the entry of message `id` (its start for a streamed one, never its end marker), or -1. */
export function messagePosition(log: Log, id: string): number {
  const { entries } = log;
  for (let position = entries.positionOf(id); position >= 0; position--) {
    if (entries.idAt(position) === id && !entries.jsonAt(position).startsWith('{"endOf"')) return position;
  }
  return -1;
}

export function overlayOf(log: Log | undefined, ids: readonly string[]): Map<string, OverlayFields> {
  const out = new Map<string, OverlayFields>();
  if (!log) return out;
  for (const id of ids) {
    const fields = log.overlay.get(id);
    if (fields) out.set(id, fields);
  }
  return out;
}

/** Drops overlay fields of messages older than the oldest entry kept (UUIDv7 ids sort by time). */
export function prune(log: Log): void {
  const oldest = log.entries.length === 0 ? null : log.entries.idAt(0);
  for (const id of log.overlay.keys()) if (oldest === null || id < oldest) setOverlay(log, id, undefined);
}

/** Sets (or, with undefined, deletes) the overlay fields of `id`, keeping {@link Log.overlayBytes}. */
export function setOverlay(log: Log, id: string, fields: OverlayFields | undefined): void {
  log.overlayBytes -= overlayFieldBytes(log.overlay.get(id));
  if (fields === undefined) log.overlay.delete(id);
  else log.overlay.set(id, fields);
  log.overlayBytes += overlayFieldBytes(fields);
}

function overlayFieldBytes(fields: OverlayFields | undefined): number {
  if (!fields) return 0;
  return Buffer.byteLength(fields.final ?? '') + Buffer.byteLength(fields.feedback ?? '');
}
