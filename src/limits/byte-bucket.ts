/**
 * A budget of bytes per second: a token bucket refilled at `ratePerS` bytes up to `burst`, spent by
 * what was actually sent. A spend may exceed what is left (a message is not cut in half): the
 * bucket then stays in debt until the refill covers it.
 */
export class ByteBucket {
  private tokens: number;
  private last = Date.now();

  /** @param ratePerS bytes a second; 0 = unlimited. */
  constructor(
    private readonly ratePerS: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  /** Bytes that may be spent now: ≤ 0 while in debt, Infinity when unlimited. */
  available(now = Date.now()): number {
    if (this.ratePerS === 0) return Number.POSITIVE_INFINITY;
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.ratePerS);
    this.last = now;
    return this.tokens;
  }

  spend(bytes: number): void {
    if (this.ratePerS !== 0) this.tokens -= bytes;
  }
}
