import { LRUCache } from 'lru-cache';
import type { DedupeKey, DedupeRecord, DedupeStore } from '../store';

/** Records kept at most by the single in-memory replica (about 20 MB); the oldest go first. */
export const MEMORY_DEDUPE_MAX_RECORDS = 100_000;

/**
 * Dedupe records of the single replica, each for its TTL, in an LRU cache bounded by count as
 * well: past the bound (a sustained rate above MAX / DEDUPE_WINDOW_S), the least recently used
 * record goes early and a late retry of it would be delivered again, which bounded memory is worth.
 */
export class MemoryDedupeStore implements DedupeStore {
  readonly records: LRUCache<string, DedupeRecord>;

  constructor(maxRecords = MEMORY_DEDUPE_MAX_RECORDS) {
    this.records = new LRUCache<string, DedupeRecord>({ max: maxRecords, ttlAutopurge: false });
  }

  async claim(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<DedupeRecord | null> {
    const name = recordName(key);
    const existing = this.records.get(name);
    if (existing) return existing;
    this.records.set(name, record, { ttl: ttlS * 1000 });
    return null;
  }

  async markDelivered(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<void> {
    this.records.set(recordName(key), { ...record, delivered: true }, { ttl: ttlS * 1000 });
  }
}

/**
 * The sub's length goes first, so no two keys share a name whatever characters sub holds; an agentId
 * has no space (AGENT_ID_PATTERN).
 */
function recordName({ agentId, sub, clientMessageId }: DedupeKey): string {
  return `${agentId} ${sub.length}:${sub}:${clientMessageId}`;
}
