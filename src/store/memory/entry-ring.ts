/**
 * Bytes a ring's buffer starts with; it doubles as entries need (and halves when they shrink).
 * Small, as most of up to 10,000 logs may hold a message or two.
 */
const FIRST_CAPACITY = 256;

/** A slot's seq (Float64) and its three offsets (Int32). */
const BYTES_PER_SLOT = 8 + 3 * 4;

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
  private bytes: Buffer = Buffer.allocUnsafeSlow(FIRST_CAPACITY);
  /** Where the next entry's bytes go. */
  private tail = 0;

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, not ${maxEntries}`);
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
   * its seq is returned (else 0).
   */
  push(seq: number, id: string, json: string): number {
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
    const worst = 3 * (id.length + json.length);
    const capacity = this.bytes.length;
    if (capacity - this.tail < worst || (capacity > FIRST_CAPACITY && 8 * this.liveBytes() < capacity)) {
      this.makeRoom(Buffer.byteLength(id) + Buffer.byteLength(json));
    }
    const slot = (this.head + this.count) % this.seqs.length;
    this.seqs[slot] = seq;
    this.starts[slot] = this.tail;
    this.tail += this.bytes.write(id, this.tail);
    this.idEnds[slot] = this.tail;
    this.tail += this.bytes.write(json, this.tail);
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
  private liveBytes(): number {
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
    let capacity = this.bytes.length;
    while (capacity < 2 * wanted) capacity *= 2;
    while (capacity > FIRST_CAPACITY && capacity > 4 * wanted) capacity /= 2;
    const target = capacity === this.bytes.length ? this.bytes : Buffer.allocUnsafeSlow(capacity);
    const shift = this.count === 0 ? this.tail : this.starts[this.head];
    this.bytes.copy(target, 0, shift, this.tail);
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
