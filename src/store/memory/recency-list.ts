/**
 * What a value of a {@link RecencyList} carries itself, so the list allocates nothing per entry:
 * its key, its expiry (epoch ms) and its neighbours in the list.
 */
export interface Listed<V> {
  readonly key: string;
  expiresAt: number;
  older: V | null;
  newer: V | null;
}

/** How often, at most, the embedded store's recency orders sweep expired entries from their oldest end. */
export const SWEEP_EVERY_MS = 1000;

/**
 * Values by key, in the order they were last touched: a doubly linked list through the values
 * themselves, oldest first, beside a Map for lookups. Built for the embedded store's hot path,
 * which touches an entry on every message: a touch relinks a value (a few pointer writes), where
 * an LRU cache with TTLs reads the clock and updates several per-entry arrays. (A Map's own
 * insertion order is no substitute: deleting from its front leaves holes that every new iterator
 * walks past until the table is rebuilt.)
 *
 * Every owner gives its entries the same lifetime after a write, so the oldest are also the first
 * to expire, and expired entries are swept from that end at most once a second; one that a read
 * moved up (a read does not extend the lifetime) is dropped when read again or when it reaches the
 * oldest end, within the owner's count bounds.
 */
export class RecencyList<V extends Listed<V>> {
  private readonly byKey = new Map<string, V>();
  private oldest: V | null = null;
  private newest: V | null = null;
  private sweptAt = 0;

  /** `onDrop` hears of every value that leaves other than by {@link clear}, to keep totals. */
  constructor(private readonly onDrop: (value: V) => void = () => {}) {}

  get size(): number {
    return this.byKey.size;
  }

  /** The live value under `key`; an expired one is dropped. Does not touch it. */
  peek(key: string, now: number): V | undefined {
    const value = this.byKey.get(key);
    if (value === undefined || value.expiresAt > now) return value;
    this.remove(value);
    return undefined;
  }

  /** The live value under `key`, made the newest. */
  get(key: string, now: number): V | undefined {
    const value = this.peek(key, now);
    if (value !== undefined) this.touch(value);
    return value;
  }

  /**
   * Makes `value` the newest, adding it (in place of any other value under its key) if it is not
   * listed. A listed value is moved without a lookup by key: only the oldest has no older one.
   */
  touch(value: V): void {
    if (value.older !== null || this.oldest === value) {
      if (this.newest === value) return;
      this.unlink(value);
      this.linkNewest(value);
    } else {
      const other = this.byKey.get(value.key);
      if (other !== undefined) this.remove(other);
      this.add(value);
    }
  }

  /**
   * Lists `value` as the newest under a key that holds no value, as {@link peek} or {@link get}
   * just found: one map write and no lookup, for the owners' paths that add after a miss.
   */
  add(value: V): void {
    this.byKey.set(value.key, value);
    this.linkNewest(value);
  }

  delete(key: string): boolean {
    const value = this.byKey.get(key);
    if (value === undefined) return false;
    this.remove(value);
    return true;
  }

  /** Drops the oldest values while `over()` holds. */
  trim(over: () => boolean): void {
    while (this.oldest !== null && over()) this.remove(this.oldest);
  }

  /** Drops expired values from the oldest end, at most once per {@link SWEEP_EVERY_MS}. */
  sweep(now: number): void {
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    while (this.oldest !== null && this.oldest.expiresAt <= now) this.remove(this.oldest);
  }

  /** Every value, oldest first, expired ones included. */
  *values(): IterableIterator<V> {
    for (let value = this.oldest; value !== null; value = value.newer) yield value;
  }

  clear(): void {
    // Unlinked as well, so a cleared value is not taken for a listed one by touch().
    for (let value = this.oldest; value !== null;) {
      const next: V | null = value.newer;
      value.older = value.newer = null;
      value = next;
    }
    this.byKey.clear();
    this.oldest = this.newest = null;
  }

  private remove(value: V): void {
    this.byKey.delete(value.key);
    this.unlink(value);
    this.onDrop(value);
  }

  private linkNewest(value: V): void {
    value.older = this.newest;
    value.newer = null;
    if (this.newest) this.newest.newer = value;
    else this.oldest = value;
    this.newest = value;
  }

  private unlink(value: V): void {
    if (value.older) value.older.newer = value.newer;
    else this.oldest = value.newer;
    if (value.newer) value.newer.older = value.older;
    else this.newest = value.older;
    value.older = value.newer = null;
  }
}
