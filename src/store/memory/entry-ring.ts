/**
 * Bytes a ring's buffer starts with; it doubles as entries need (and halves when they shrink).
 * Small, as most of up to 10,000 logs may hold a message or two.
 */
const FIRST_CAPACITY = 256;

/** A slot's seq (Float64) and its three offsets (Int32). */
const BYTES_PER_SLOT = 8 + 3 * 4;

/**
 * Buffers rings gave up (grown past, shrunk from, or their log dropped), kept by size for the next
 * ring that needs one of that size, up to `maxBytes` in all. A full embedded log drops its least
 * recently used conversations as new ones grow: without the pool every one of them grows its buffer
 * anew by doubling, two to eight bytes allocated for every byte it comes to hold (at 8 KiB
 * messages, about three copies of each relayed message's bytes, per round trip: docs/benchmarks.md,
 * "Allocation per round trip"). One per log; what it holds is outside the log's byte bound, so it
 * is a fraction of it.
 */
export class BufferPool {
  private readonly bySize = new Map<number, Buffer[]>();
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes kept for reuse. */
  get byteSize(): number {
    return this.held;
  }

  /** A buffer of exactly `size` bytes, reused when one is kept, else a new one. Its bytes are not cleared. */
  take(size: number): Buffer {
    const list = this.bySize.get(size);
    const kept = list?.pop();
    if (kept === undefined) return Buffer.allocUnsafeSlow(size);
    if (list!.length === 0) this.bySize.delete(size);
    this.held -= size;
    return kept;
  }

  /**
   * Keeps `buffer` for a later {@link take}; it must no longer be used by whoever gives it. Past
   * the bound the largest buffers kept go first (and `buffer` itself when it is the largest): a
   * pool full of one size, which rings stopped asking for, would otherwise turn every other away.
   */
  give(buffer: Buffer): void {
    if (buffer.length > this.maxBytes) return;
    while (this.held + buffer.length > this.maxBytes) {
      const largest = Math.max(...this.bySize.keys());
      if (largest <= buffer.length) return;
      const list = this.bySize.get(largest)!;
      list.pop();
      this.held -= largest;
      if (list.length === 0) this.bySize.delete(largest);
    }
    let list = this.bySize.get(buffer.length);
    if (list === undefined) this.bySize.set(buffer.length, (list = []));
    list.push(buffer);
    this.held += buffer.length;
  }

  clear(): void {
    this.bySize.clear();
    this.held = 0;
  }
}

/** For rings without a pool: every buffer new. */
const NO_POOL = new BufferPool(0);

/**
 * One log's entries, oldest first, at most `maxEntries` (a push past it drops the oldest): each a
 * seq, an id and a message as JSON, the id and JSON kept as UTF-8 in one buffer outside the V8 heap.
 *
 * The embedded log holds up to 200,000 messages, and every append replaces one: as strings on the
 * heap each would be copied out of the young generation, then left in the old one for a full
 * mark-compact to find and move around (a few hundred bytes per relayed message, most of what the
 * hub promoted, and the compactions' pauses). Here an append writes bytes into a buffer the log
 * already has, so what it allocates dies young, and the garbage collector sees a buffer per log,
 * not two strings per message. Reads (recovery, history pages) decode what they return.
 *
 * Bytes are written one after the other; when the buffer's end is reached the live entries move
 * down to its start (the oldest are the ones dropped, so the dead bytes are in front), and the
 * buffer is replaced by one twice (or half) the size when live bytes need the room (or use less
 * than an eighth of it).
 * Entry positions are a ring over typed arrays, grown by doubling up to `maxEntries`.
 */
export class EntryRing {
  private seqs = new Float64Array(1);
  private starts = new Int32Array(1);
  private idEnds = new Int32Array(1);
  private ends = new Int32Array(1);
  /** Slot of the oldest entry. */
  private head = 0;
  private count = 0;
  private bytes: Buffer;
  /** Where the next entry's bytes go. */
  private tail = 0;

  constructor(
    readonly maxEntries: number,
    private readonly pool: BufferPool = NO_POOL,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, not ${maxEntries}`);
    this.bytes = pool.take(FIRST_CAPACITY);
  }

  /** Gives the ring's buffer to its pool: the ring must not be used after. */
  release(): void {
    this.pool.give(this.bytes);
    this.bytes = Buffer.alloc(0);
    this.count = 0;
    this.tail = 0;
  }

  get length(): number {
    return this.count;
  }

  /** Bytes the ring holds: its buffer (all of it, live or not) and its slot arrays. */
  get byteSize(): number {
    return this.bytes.length + this.seqs.length * BYTES_PER_SLOT;
  }

  /** Seq of the entry at `position` (0 = oldest). */
  seqAt(position: number): number {
    return this.seqs[this.slot(position)];
  }

  /** Id of the entry at `position` (0 = oldest). */
  idAt(position: number): string {
    const slot = this.slot(position);
    return this.bytes.toString('utf8', this.starts[slot], this.idEnds[slot]);
  }

  /** JSON of the entry at `position` (0 = oldest). */
  jsonAt(position: number): string {
    const slot = this.slot(position);
    return this.bytes.toString('utf8', this.idEnds[slot], this.ends[slot]);
  }

  /**
   * Appends an entry; when the ring holds `maxEntries` already, the oldest goes to make room and
   * its seq is returned (else 0). The entry's JSON is `json + rest + after`: a message's JSON may
   * come in three parts, its long text between them as it is (json-frames.ts, jsonAroundString), so
   * that the text is written once, as bytes, and never copied into one JSON string first.
   */
  push(seq: number, id: string, json: string, rest = '', after = ''): number {
    let dropped = 0;
    if (this.count === this.maxEntries) {
      dropped = this.seqs[this.head];
      this.head = (this.head + 1) % this.seqs.length;
      this.count--;
    } else if (this.count === this.seqs.length) {
      this.growSlots();
    }
    // UTF-8 takes at most three bytes per UTF-16 unit: the exact length is needed only near the end,
    // or when the buffer is eight times what the live entries need and is due to shrink.
    const worst = 3 * (id.length + json.length + rest.length + after.length);
    const capacity = this.bytes.length;
    if (capacity - this.tail < worst || (capacity > FIRST_CAPACITY && 8 * this.liveBytes() < capacity)) {
      this.makeRoom(Buffer.byteLength(id) + Buffer.byteLength(json) + Buffer.byteLength(rest) + Buffer.byteLength(after));
    }
    const slot = (this.head + this.count) % this.seqs.length;
    this.seqs[slot] = seq;
    this.starts[slot] = this.tail;
    this.tail += this.bytes.write(id, this.tail);
    this.idEnds[slot] = this.tail;
    this.tail += this.bytes.write(json, this.tail);
    if (rest.length > 0) this.tail += this.bytes.write(rest, this.tail);
    if (after.length > 0) this.tail += this.bytes.write(after, this.tail);
    this.ends[slot] = this.tail;
    this.count++;
    return dropped;
  }

  /** Position (0 = oldest) of the entry with `id`, searched from the newest; -1 when none has it. */
  positionOf(id: string): number {
    const wanted = Buffer.from(id);
    for (let position = this.count - 1; position >= 0; position--) {
      const slot = this.slot(position);
      const start = this.starts[slot];
      if (this.idEnds[slot] - start === wanted.length && this.bytes.compare(wanted, 0, wanted.length, start, this.idEnds[slot]) === 0) {
        return position;
      }
    }
    return -1;
  }

  /** Position (0 = oldest) of the first entry whose seq is >= `value` (the length when none is). */
  firstAtLeast(value: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.seqAt(mid) < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Bytes from the oldest entry's start to the tail: live bytes are contiguous, as only the oldest leave. */
  /** UTF-8 bytes of the entries held (ids and JSON), without the buffer's free space. */
  liveBytes(): number {
    return this.count === 0 ? 0 : this.tail - this.starts[this.head];
  }

  private slot(position: number): number {
    return (this.head + position) % this.seqs.length;
  }

  /** Doubles the slot arrays (up to `maxEntries`), the oldest entry moving to slot 0. */
  private growSlots(): void {
    const size = Math.min(this.maxEntries, this.seqs.length * 2);
    const seqs = new Float64Array(size);
    const starts = new Int32Array(size);
    const idEnds = new Int32Array(size);
    const ends = new Int32Array(size);
    for (let position = 0; position < this.count; position++) {
      const slot = this.slot(position);
      seqs[position] = this.seqs[slot];
      starts[position] = this.starts[slot];
      idEnds[position] = this.idEnds[slot];
      ends[position] = this.ends[slot];
    }
    this.seqs = seqs;
    this.starts = starts;
    this.idEnds = idEnds;
    this.ends = ends;
    this.head = 0;
  }

  /**
   * Moves the live entries' bytes to the start of a buffer with room for `needed` more after them:
   * this one, or one resized so that live bytes plus the new entry fill between a quarter and a half.
   */
  private makeRoom(needed: number): void {
    const live = this.liveBytes();
    const wanted = live + needed;
    // A released ring's buffer is empty.
    let capacity = Math.max(this.bytes.length, FIRST_CAPACITY);
    while (capacity < 2 * wanted) capacity *= 2;
    while (capacity > FIRST_CAPACITY && capacity > 4 * wanted) capacity /= 2;
    const target = capacity === this.bytes.length ? this.bytes : this.pool.take(capacity);
    const shift = this.count === 0 ? this.tail : this.starts[this.head];
    this.bytes.copy(target, 0, shift, this.tail);
    if (target !== this.bytes) this.pool.give(this.bytes);
    for (let position = 0; position < this.count; position++) {
      const slot = this.slot(position);
      this.starts[slot] -= shift;
      this.idEnds[slot] -= shift;
      this.ends[slot] -= shift;
    }
    this.bytes = target;
    this.tail = live;
  }
}
