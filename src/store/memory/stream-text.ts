/**
 * The text of an open stream on the single replica: its UTF-8 bytes in one buffer that grows by half
 * again each time (up to the stream's byte bound). A string grown with `+=` per delta is a rope: two
 * heap objects per delta (34 bytes of heap per two-character delta, measured) that live until the
 * stream ends, which young collections copy and promote and full ones mark, all of them, for every
 * open stream. Here a delta's string dies young and the text sits outside the V8 heap
 * (docs/benchmarks.md, "On a quiet machine"). Text is kept as UTF-8, as Redis keeps it: an unpaired
 * surrogate reads back as U+FFFD on either store.
 */
export class StreamText {
  private buffer: Buffer = EMPTY;
  private used = 0;

  /** Bytes held. */
  get bytes(): number {
    return this.used;
  }

  /** Appends `text` of `bytes` UTF-8 bytes (the caller counted them); the buffer never grows past `maxBytes`. */
  append(text: string, bytes: number, maxBytes: number): void {
    const needed = this.used + bytes;
    if (needed > this.buffer.length) this.grow(needed, maxBytes);
    this.used += this.buffer.write(text, this.used);
  }

  toString(): string {
    return this.buffer.toString('utf8', 0, this.used);
  }

  private grow(needed: number, maxBytes: number): void {
    // Not from Buffer's shared pool: a small stream's slice would keep a whole pool page alive.
    const next = Buffer.allocUnsafeSlow(Math.max(needed, Math.min(Math.max(Math.ceil(this.buffer.length * 1.5), MIN_CAPACITY), maxBytes)));
    this.buffer.copy(next, 0, 0, this.used);
    this.buffer = next;
  }
}

const EMPTY = Buffer.alloc(0);
const MIN_CAPACITY = 128;
