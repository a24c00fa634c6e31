import { NO_SLOT } from './slot-recency';

/** Bytes before each record in the arena: its slot and its length, so the arena's head can walk it. */
const HEADER_BYTES = 8;

/**
 * Records by name, each in a numbered slot (0 to capacity - 1, handed out by the owner), with
 * everything outside the V8 heap: a record's name, id and ts are UTF-8 bytes in one arena, and the
 * index from name to slot is open addressing over an Int32Array (linear probing; a delete shifts
 * the entries after it back, so no tombstones pile up and the table is never rebuilt).
 *
 * The arena is a ring: records are written at its tail, one after the other, and space comes back
 * from its head, where the earliest written are: a record its owner has let go of is skipped there,
 * and one still held is evicted (the owner hears of it) when the bytes are needed. So the table is
 * bounded by bytes as well as by slots, and a lookup, an insert or a removal allocates nothing but
 * what a hit decodes.
 */
export class RecordTable {
  private readonly index: Int32Array;
  private readonly mask: number;
  private readonly hashes: Int32Array;
  /** Arena offset of each slot's record (its header), -1 for a slot that holds none. */
  private readonly starts: Int32Array;
  private readonly nameEnds: Int32Array;
  private readonly idEnds: Int32Array;
  private readonly ends: Int32Array;
  private readonly arena: Buffer;
  private head = 0;
  private tail = 0;
  /** Whether the tail has gone round to the arena's start, the head not yet. */
  private wrapped = false;
  /** Where the records stop before the arena's start, while wrapped. */
  private wrapEnd = 0;
  private live = 0;
  /** The name last encoded, its bytes in `scratch` (after a header's room) and their hash. */
  private scratch = Buffer.allocUnsafeSlow(1024);
  private scratchName: string | null = null;
  private scratchLength = 0;
  private scratchHash = 0;
  private readonly seed = (Math.random() * 0x100000000) | 0;

  /** `onEvict` hears of a record the arena took back (removed already) to make room; the owner frees its slot. */
  constructor(
    readonly capacity: number,
    arenaBytes: number,
    private readonly onEvict: (slot: number) => void,
  ) {
    let size = 1;
    while (size < 2 * capacity) size *= 2;
    this.index = new Int32Array(size);
    this.mask = size - 1;
    this.hashes = new Int32Array(capacity);
    this.starts = new Int32Array(capacity).fill(-1);
    this.nameEnds = new Int32Array(capacity);
    this.idEnds = new Int32Array(capacity);
    this.ends = new Int32Array(capacity);
    this.arena = Buffer.allocUnsafeSlow(arenaBytes);
  }

  /** The slot holding the record named `name`, or {@link NO_SLOT}. */
  find(name: string): number {
    this.encode(name);
    const { scratch, scratchLength, scratchHash } = this;
    for (let at = scratchHash & this.mask; ; at = (at + 1) & this.mask) {
      const entry = this.index[at];
      if (entry === 0) return NO_SLOT;
      const slot = entry - 1;
      const start = this.starts[slot] + HEADER_BYTES;
      if (
        this.hashes[slot] === scratchHash &&
        this.nameEnds[slot] - start === scratchLength &&
        this.arena.compare(scratch, HEADER_BYTES, HEADER_BYTES + scratchLength, start, this.nameEnds[slot]) === 0
      ) {
        return slot;
      }
    }
  }

  /**
   * Stores a record in `slot` (free, its name held by no other), taking arena space back from the
   * earliest written records as needed. Throws a RangeError for a record larger than the arena.
   * The record is laid out in `scratch` behind the encoded name, then copied into the arena at once.
   */
  insert(slot: number, name: string, id: string, ts: string): void {
    this.encode(name);
    const nameEnd = HEADER_BYTES + this.scratchLength;
    const room = nameEnd + 3 * (id.length + ts.length);
    if (room > this.scratch.length) {
      const larger = Buffer.allocUnsafeSlow(room);
      this.scratch.copy(larger, 0, 0, nameEnd);
      this.scratch = larger;
    }
    const idEnd = nameEnd + this.scratch.write(id, nameEnd);
    const length = idEnd + this.scratch.write(ts, idEnd);
    this.scratch.writeInt32LE(slot, 0);
    this.scratch.writeInt32LE(length, 4);
    const start = this.allocate(length);
    this.scratch.copy(this.arena, start, 0, length);
    this.starts[slot] = start;
    this.nameEnds[slot] = start + nameEnd;
    this.idEnds[slot] = start + idEnd;
    this.ends[slot] = start + length;
    this.hashes[slot] = this.scratchHash;
    let at = this.scratchHash & this.mask;
    while (this.index[at] !== 0) at = (at + 1) & this.mask;
    this.index[at] = slot + 1;
    this.live++;
  }

  /** Forgets the record in `slot`; its bytes are skipped when the arena's head reaches them. */
  remove(slot: number): void {
    let at = this.hashes[slot] & this.mask;
    while (this.index[at] !== slot + 1) at = (at + 1) & this.mask;
    // Backward shift: an entry after the hole moves into it unless its home lies after the hole.
    for (let next = (at + 1) & this.mask; this.index[next] !== 0; next = (next + 1) & this.mask) {
      const home = this.hashes[this.index[next] - 1] & this.mask;
      const stays = at <= next ? at < home && home <= next : at < home || home <= next;
      if (stays) continue;
      this.index[at] = this.index[next];
      at = next;
    }
    this.index[at] = 0;
    this.starts[slot] = -1;
    if (--this.live === 0) this.empty();
  }

  idOf(slot: number): string {
    return this.arena.toString('utf8', this.nameEnds[slot], this.idEnds[slot]);
  }

  tsOf(slot: number): string {
    return this.arena.toString('utf8', this.idEnds[slot], this.ends[slot]);
  }

  /** Forgets every record without telling the owner. */
  clear(): void {
    this.index.fill(0);
    this.starts.fill(-1);
    this.live = 0;
    this.empty();
  }

  private empty(): void {
    this.head = this.tail = 0;
    this.wrapped = false;
  }

  /** Arena offset for `length` bytes at the tail, taken back from the head as needed. */
  private allocate(length: number): number {
    if (length > this.arena.length) throw new RangeError(`a record of ${length} bytes does not fit a ${this.arena.length}-byte arena`);
    for (;;) {
      if (!this.wrapped) {
        if (this.arena.length - this.tail >= length) return this.advanceTail(length);
        if (this.head >= length) {
          this.wrapped = true;
          this.wrapEnd = this.tail;
          this.tail = 0;
          return this.advanceTail(length);
        }
      } else if (this.head - this.tail >= length) {
        return this.advanceTail(length);
      }
      this.advanceHead();
    }
  }

  private advanceTail(length: number): number {
    const start = this.tail;
    this.tail += length;
    return start;
  }

  /** Takes the record at the arena's head back: skipped when let go of, evicted when still held. */
  private advanceHead(): void {
    const slot = this.arena.readInt32LE(this.head);
    const length = this.arena.readInt32LE(this.head + 4);
    if (this.starts[slot] === this.head) {
      this.remove(slot);
      this.onEvict(slot);
      // The last record gone, remove() has emptied the arena: nothing is left to walk past.
      if (this.live === 0) return;
    }
    this.head += length;
    if (this.wrapped && this.head === this.wrapEnd) {
      this.head = 0;
      this.wrapped = false;
    }
  }

  /** Puts `name`'s UTF-8 bytes in `scratch` after the header's room and hashes them (FNV-1a, seeded per process). */
  private encode(name: string): void {
    if (name === this.scratchName) return;
    if (HEADER_BYTES + 3 * name.length > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow(HEADER_BYTES + 3 * name.length);
    const length = this.scratch.write(name, HEADER_BYTES);
    const end = HEADER_BYTES + length;
    let hash = 0x811c9dc5 ^ this.seed;
    for (let i = HEADER_BYTES; i < end; i++) hash = Math.imul(hash ^ this.scratch[i], 0x01000193);
    // murmur3's finalizer: FNV's multiply moves bits only upwards, and the index reads the low ones.
    hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
    hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
    this.scratchName = name;
    this.scratchLength = length;
    this.scratchHash = hash ^ (hash >>> 16);
  }
}
