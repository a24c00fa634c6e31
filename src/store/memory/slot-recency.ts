/** No slot: the end of the order, or a slot that could not be had. */
export const NO_SLOT = -1;

/** How often, at most, the embedded store sweeps expired entries (dedupe records, conversation logs). */
export const SWEEP_EVERY_MS = 1000;

/**
 * A fixed number of slots (the integers 0 to capacity - 1), those in use in the order they were
 * last touched, oldest first, the free ones on a stack: the bookkeeping of an LRU cache for an
 * owner that keeps its records in parallel arrays indexed by slot rather than as objects. Links and
 * the free stack are typed arrays, so a touch writes a few integers and the garbage collector has
 * nothing per record to trace.
 */
export class SlotRecency {
  private readonly older: Int32Array;
  private readonly newer: Int32Array;
  private readonly free: Int32Array;
  private freeCount = 0;
  private oldestSlot = NO_SLOT;
  private newestSlot = NO_SLOT;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, not ${capacity}`);
    this.older = new Int32Array(capacity);
    this.newer = new Int32Array(capacity);
    this.free = new Int32Array(capacity);
    this.clear();
  }

  /** Slots in use. */
  get size(): number {
    return this.capacity - this.freeCount;
  }

  /** The least recently touched slot in use, or {@link NO_SLOT}. */
  get oldest(): number {
    return this.oldestSlot;
  }

  /** A free slot, now in use as the newest; {@link NO_SLOT} when every slot is in use. */
  take(): number {
    if (this.freeCount === 0) return NO_SLOT;
    const slot = this.free[--this.freeCount];
    this.linkNewest(slot);
    return slot;
  }

  /** Makes a slot in use the newest. */
  touch(slot: number): void {
    if (slot === this.newestSlot) return;
    this.unlink(slot);
    this.linkNewest(slot);
  }

  /** Frees a slot in use. */
  release(slot: number): void {
    this.unlink(slot);
    this.free[this.freeCount++] = slot;
  }

  /** Slots in use, oldest first. */
  *inUse(): IterableIterator<number> {
    for (let slot = this.oldestSlot; slot !== NO_SLOT; slot = this.newer[slot]) yield slot;
  }

  /** Frees every slot; the lowest are taken first. */
  clear(): void {
    for (let i = 0; i < this.capacity; i++) this.free[i] = this.capacity - 1 - i;
    this.freeCount = this.capacity;
    this.oldestSlot = this.newestSlot = NO_SLOT;
  }

  private linkNewest(slot: number): void {
    this.older[slot] = this.newestSlot;
    this.newer[slot] = NO_SLOT;
    if (this.newestSlot !== NO_SLOT) this.newer[this.newestSlot] = slot;
    else this.oldestSlot = slot;
    this.newestSlot = slot;
  }

  private unlink(slot: number): void {
    const older = this.older[slot];
    const newer = this.newer[slot];
    if (older !== NO_SLOT) this.newer[older] = newer;
    else this.oldestSlot = newer;
    if (newer !== NO_SLOT) this.older[newer] = older;
    else this.newestSlot = older;
  }
}
