import type { DedupeKey, DedupeRecord, DedupeStore } from '../store';
import { RecordTable } from './record-table';
import { NO_SLOT, SlotRecency, SWEEP_EVERY_MS } from './slot-recency';

/** Records kept at most by the single in-memory replica. The least recently used go first. */
export const MEMORY_DEDUPE_MAX_RECORDS = 100_000;

/**
 * Arena bytes per record: a record takes its key's, id's and ts's UTF-8 and 8 bytes more (about
 * 150 with UUIDs for sub and client message id and a short bot id), so the count bounds the store
 * before the bytes do unless keys run long; then the earliest written go first. 25.6 MB for the
 * default count, resident as the ring first reaches its pages.
 */
const ARENA_BYTES_PER_RECORD = 256;

/**
 * Dedupe records of the single replica, each for its TTL, bounded by count and by bytes: past the
 * bounds (a sustained rate above MAX / DEDUPE_WINDOW_S), records go early and a late retry of one
 * would be delivered again, which bounded memory is worth.
 *
 * Every client message leaves a record, and a full store replaces one per message. Kept on the V8
 * heap, records (a name, an id and a ts string each, and a Map entry) outlived the young generation
 * and were then garbage in the old one for a mark-compact to find and move; here a record is a slot:
 * its bytes and the index by name in a {@link RecordTable} outside the heap, its recency in a
 * {@link SlotRecency}, its expiry and delivered mark in typed arrays.
 */
export class MemoryDedupeStore implements DedupeStore {
  private readonly slots: SlotRecency;
  private readonly table: RecordTable;
  private readonly expiresAt: Float64Array;
  private readonly delivered: Uint8Array;
  private sweptAt = 0;

  constructor(maxRecords = MEMORY_DEDUPE_MAX_RECORDS, arenaBytes = maxRecords * ARENA_BYTES_PER_RECORD) {
    this.slots = new SlotRecency(maxRecords);
    this.table = new RecordTable(maxRecords, arenaBytes, (slot) => this.slots.release(slot));
    this.expiresAt = new Float64Array(maxRecords);
    this.delivered = new Uint8Array(maxRecords);
  }

  /** Records held, expired ones not yet swept included. */
  get size(): number {
    return this.slots.size;
  }

  async claim(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<DedupeRecord | null> {
    return this.claimNow(key, record, ttlS);
  }

  /** {@link claim} without the promise, for the store's own intake. */
  claimNow(key: DedupeKey, record: DedupeRecord, ttlS: number): DedupeRecord | null {
    const now = Date.now();
    const name = recordName(key);
    const slot = this.liveSlot(name, now);
    if (slot !== NO_SLOT) {
      this.slots.touch(slot);
      return { id: this.table.idOf(slot), ts: this.table.tsOf(slot), delivered: this.delivered[slot] === 1 };
    }
    this.sweep(now);
    this.put(name, record, record.delivered, now + ttlS * 1000);
    return null;
  }

  async find(key: DedupeKey): Promise<DedupeRecord | null> {
    const slot = this.liveSlot(recordName(key), Date.now());
    if (slot === NO_SLOT) return null;
    return { id: this.table.idOf(slot), ts: this.table.tsOf(slot), delivered: this.delivered[slot] === 1 };
  }

  async markDelivered(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<void> {
    const now = Date.now();
    const name = recordName(key);
    const slot = this.liveSlot(name, now);
    if (slot === NO_SLOT) {
      this.put(name, record, true, now + ttlS * 1000);
      return;
    }
    this.delivered[slot] = 1;
    this.expiresAt[slot] = now + ttlS * 1000;
    this.slots.touch(slot);
  }

  /** Drops the record under `key`: a claim whose message the quota refused, so a retry is a fresh message. */
  releaseNow(key: DedupeKey): void {
    const slot = this.liveSlot(recordName(key), Date.now());
    if (slot !== NO_SLOT) this.drop(slot);
  }

  clear(): void {
    this.table.clear();
    this.slots.clear();
  }

  /** The slot of the live record under `name`, or {@link NO_SLOT}; an expired one is dropped. */
  private liveSlot(name: string, now: number): number {
    const slot = this.table.find(name);
    if (slot === NO_SLOT || this.expiresAt[slot] > now) return slot;
    this.drop(slot);
    return NO_SLOT;
  }

  /** Stores a record under a name that holds none, in place of the oldest when the store is full. */
  private put(name: string, { id, ts }: DedupeRecord, delivered: boolean, expiresAt: number): void {
    let slot = this.slots.take();
    if (slot === NO_SLOT) {
      this.drop(this.slots.oldest);
      slot = this.slots.take();
    }
    try {
      this.table.insert(slot, name, id, ts);
    } catch (error) {
      // A record larger than the whole arena: the claim fails, and the slot goes back unused.
      this.slots.release(slot);
      throw error;
    }
    this.delivered[slot] = delivered ? 1 : 0;
    this.expiresAt[slot] = expiresAt;
  }

  /** Drops expired records from the oldest end, at most once per {@link SWEEP_EVERY_MS}. */
  private sweep(now: number): void {
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    for (let slot = this.slots.oldest; slot !== NO_SLOT && this.expiresAt[slot] <= now; slot = this.slots.oldest) {
      this.drop(slot);
    }
  }

  private drop(slot: number): void {
    this.table.remove(slot);
    this.slots.release(slot);
  }
}

/**
 * The sub's length goes first, so no two keys share a name whatever characters sub holds; an agentId
 * has no space (AGENT_ID_PATTERN). Joined rather than concatenated: V8 keeps a concatenation as a
 * tree of its parts, which it flattens into a copy before writing it out or comparing it with the
 * name the table last encoded; a join is one flat string. The name itself dies young: the table
 * keeps its bytes.
 */
function recordName({ agentId, sub, clientMessageId }: DedupeKey): string {
  return [agentId, ' ', sub.length, ':', sub, ':', clientMessageId].join('');
}
