import type { DedupeKey, DedupeRecord, DedupeStore } from '../store';
import { SWEEP_EVERY_MS } from './recency-list';
import { NO_SLOT, SlotRecency } from './slot-recency';

/**
 * Records kept at most by the single in-memory replica: about 30 MB when full, 5 MB of it the arrays
 * taken at start. The least recently used go first.
 */
export const MEMORY_DEDUPE_MAX_RECORDS = 100_000;

/**
 * Dedupe records of the single replica, each for its TTL, bounded by count as well: past the bound
 * (a sustained rate above MAX / DEDUPE_WINDOW_S), the least recently used record goes early and a
 * late retry of it would be delivered again, which bounded memory is worth.
 *
 * Every client message leaves a record that outlives the young generation (copied there twice, then
 * marked by every mark-compact while it lives), and a full store holds 100,000. Kept as an object
 * per record, with a boxed expiry and a name that was a tree of concatenated strings, a record was
 * about ten objects; here it is a slot in parallel arrays holding two or three strings (its flat name,
 * its id, which the conversation log shares, and its ts), the rest in typed arrays, and the
 * delivered mark changes it in place.
 */
export class MemoryDedupeStore implements DedupeStore {
  private readonly slotOf = new Map<string, number>();
  private readonly slots: SlotRecency;
  private readonly names: (string | undefined)[] = [];
  private readonly ids: (string | undefined)[] = [];
  private readonly stamps: (string | undefined)[] = [];
  private readonly expiresAt: Float64Array;
  private readonly delivered: Uint8Array;
  private sweptAt = 0;

  constructor(maxRecords = MEMORY_DEDUPE_MAX_RECORDS) {
    this.slots = new SlotRecency(maxRecords);
    this.expiresAt = new Float64Array(maxRecords);
    this.delivered = new Uint8Array(maxRecords);
    // Filled rather than sized, so the arrays start (and stay) with fast elements.
    for (let slot = 0; slot < maxRecords; slot++) {
      this.names.push(undefined);
      this.ids.push(undefined);
      this.stamps.push(undefined);
    }
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
      return { id: this.ids[slot]!, ts: this.stamps[slot]!, delivered: this.delivered[slot] === 1 };
    }
    this.sweep(now);
    this.put(name, record, record.delivered, now + ttlS * 1000);
    return null;
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

  clear(): void {
    for (const slot of this.slotOf.values()) this.forget(slot);
    this.slotOf.clear();
    this.slots.clear();
  }

  /** The slot of the live record under `name`, or {@link NO_SLOT}; an expired one is dropped. */
  private liveSlot(name: string, now: number): number {
    const slot = this.slotOf.get(name);
    if (slot === undefined) return NO_SLOT;
    if (this.expiresAt[slot] > now) return slot;
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
    this.names[slot] = name;
    this.ids[slot] = id;
    this.stamps[slot] = ts;
    this.delivered[slot] = delivered ? 1 : 0;
    this.expiresAt[slot] = expiresAt;
    this.slotOf.set(name, slot);
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
    this.slotOf.delete(this.names[slot]!);
    this.forget(slot);
    this.slots.release(slot);
  }

  /** Lets go of a slot's strings, so a freed slot keeps nothing alive. */
  private forget(slot: number): void {
    this.names[slot] = this.ids[slot] = this.stamps[slot] = undefined;
  }
}

/**
 * The sub's length goes first, so no two keys share a name whatever characters sub holds; an agentId
 * has no space (AGENT_ID_PATTERN). Joined rather than concatenated: V8 keeps a concatenation as a
 * tree of its parts, and a Map key stays one (about five more objects per record, the client's
 * message id among them, for as long as the record lives); a join is one flat string.
 */
function recordName({ agentId, sub, clientMessageId }: DedupeKey): string {
  return [agentId, ' ', sub.length, ':', sub, ':', clientMessageId].join('');
}
