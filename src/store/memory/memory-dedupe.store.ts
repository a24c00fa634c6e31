import type { DedupeKey, DedupeRecord, DedupeStore } from '../store';
import { RecencyList, type Listed } from './recency-list';

/** Records kept at most by the single in-memory replica (about 20 MB); the oldest go first. */
export const MEMORY_DEDUPE_MAX_RECORDS = 100_000;

/** A record as kept: one object per client message, marked delivered in place. */
interface Held extends DedupeRecord, Listed<Held> {}

/**
 * Dedupe records of the single replica, each for its TTL, bounded by count as well: past the bound
 * (a sustained rate above MAX / DEDUPE_WINDOW_S), the least recently used record goes early and a
 * late retry of it would be delivered again, which bounded memory is worth. Every client message
 * leaves a record that outlives the young generation, so each is one object and its key, and the
 * delivered mark changes it in place rather than storing a second one.
 */
export class MemoryDedupeStore implements DedupeStore {
  readonly records = new RecencyList<Held>();

  constructor(private readonly maxRecords = MEMORY_DEDUPE_MAX_RECORDS) {}

  async claim(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<DedupeRecord | null> {
    return this.claimNow(key, record, ttlS);
  }

  /** {@link claim} without the promise, for the store's own intake. */
  claimNow(key: DedupeKey, record: DedupeRecord, ttlS: number): DedupeRecord | null {
    const now = Date.now();
    const name = recordName(key);
    const existing = this.records.get(name, now);
    if (existing) return { id: existing.id, ts: existing.ts, delivered: existing.delivered };
    this.records.add(held(name, record, now + ttlS * 1000));
    this.records.sweep(now);
    this.records.trim(() => this.records.size > this.maxRecords);
    return null;
  }

  async markDelivered(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<void> {
    const now = Date.now();
    const name = recordName(key);
    const expiresAt = now + ttlS * 1000;
    const kept = this.records.peek(name, now);
    if (kept === undefined) this.records.add(held(name, { ...record, delivered: true }, expiresAt));
    else {
      kept.delivered = true;
      kept.expiresAt = expiresAt;
      this.records.touch(kept);
    }
    this.records.trim(() => this.records.size > this.maxRecords);
  }
}

function held(key: string, { id, ts, delivered }: DedupeRecord, expiresAt: number): Held {
  return { key, id, ts, delivered, expiresAt, older: null, newer: null };
}

/**
 * The sub's length goes first, so no two keys share a name whatever characters sub holds; an agentId
 * has no space (AGENT_ID_PATTERN).
 */
function recordName({ agentId, sub, clientMessageId }: DedupeKey): string {
  return `${agentId} ${sub.length}:${sub}:${clientMessageId}`;
}
