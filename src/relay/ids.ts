import { randomFillSync } from 'node:crypto';

/** A message's hub-assigned identity: a UUIDv7 and the same instant as an ISO 8601 UTC string. */
export interface MessageStamp {
  id: string;
  ts: string;
}

/** Random bytes drawn at a time: one `randomFillSync` per ~680 ids. */
const POOL_BYTES = 4096;
/** Bytes of text in a UUID: 32 hex digits and 4 dashes. */
const UUID_CHARS = 36;
/** Where each of the 16 bytes goes in the text (after the dashes at 8, 13, 18 and 23). */
const BYTE_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
/** Lower-case hex digits as character codes. */
const HEX = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/**
 * Hands out message stamps: a new UUIDv7 (RFC 9562: 48-bit Unix milliseconds, then a 31-bit
 * counter seeded at random in each new millisecond that keeps ids of one millisecond ordered, then
 * random bits; method 1 of RFC 9562, section 6.2) and its timestamp. Ids never go backwards, even when the clock
 * does: the counter carries on in the last millisecond used, and `ts` is that millisecond, so
 * sorting by either sorts the same way. Built for a busy hub: the random bytes come from a pool,
 * the text is written into one buffer and read out as one string, and the last millisecond's ISO
 * string is kept (formatting one costs more than making the id).
 */
export class MessageStamper {
  private lastMs = -1;
  private lastIso = '';
  private seq = 0;
  private readonly pool = Buffer.allocUnsafe(POOL_BYTES);
  private poolAt = POOL_BYTES;
  private readonly text = Buffer.from('00000000-0000-7000-8000-000000000000', 'latin1');

  next(): MessageStamp {
    const now = Date.now();
    if (now > this.lastMs) {
      this.lastMs = now;
      this.lastIso = new Date(now).toISOString();
      this.seq = this.random(4).readUInt32BE(this.poolAt - 4) >>> 1;
    } else if (this.seq === 0x7fffffff) {
      // 2^31 ids in one millisecond: borrow the next one (RFC 9562 allows it), ts included.
      this.lastMs++;
      this.lastIso = new Date(this.lastMs).toISOString();
      this.seq = 0;
    } else {
      this.seq++;
    }
    const ms = this.lastMs;
    const seq = this.seq;
    const rnd = this.random(6);
    const at = this.poolAt - 6;
    this.put(0, Math.floor(ms / 0x10000000000) & 0xff);
    this.put(1, Math.floor(ms / 0x100000000) & 0xff);
    this.put(2, (ms >>> 24) & 0xff);
    this.put(3, (ms >>> 16) & 0xff);
    this.put(4, (ms >>> 8) & 0xff);
    this.put(5, ms & 0xff);
    this.put(6, 0x70 | ((seq >>> 28) & 0x0f));
    this.put(7, (seq >>> 20) & 0xff);
    this.put(8, 0x80 | ((seq >>> 14) & 0x3f));
    this.put(9, (seq >>> 6) & 0xff);
    this.put(10, ((seq << 2) & 0xfc) | (rnd[at] & 0x03));
    for (let i = 11; i < 16; i++) this.put(i, rnd[at + i - 10]);
    return { id: this.text.toString('latin1', 0, UUID_CHARS), ts: this.lastIso };
  }

  /** The pool, with `n` fresh bytes just before `poolAt`. */
  private random(n: number): Buffer {
    if (this.poolAt + n > POOL_BYTES) {
      randomFillSync(this.pool);
      this.poolAt = 0;
    }
    this.poolAt += n;
    return this.pool;
  }

  /** Writes byte `i` of the UUID as two hex digits. */
  private put(i: number, byte: number): void {
    const at = BYTE_AT[i];
    this.text[at] = HEX[byte >>> 4];
    this.text[at + 1] = HEX[byte & 0x0f];
  }
}

/** The current time as an ISO 8601 UTC string, the only time format on the wire. */
export function isoNow(now = Date.now()): string {
  return new Date(now).toISOString();
}
