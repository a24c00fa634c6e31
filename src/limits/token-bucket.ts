/**
 * Per-socket event rate limit: a token bucket refilled at `ratePerS` up to `burst`. `strikes`
 * counts events refused in a row; the caller disconnects a socket that keeps sending.
 */
export class TokenBucket {
  private tokens: number;
  private last = Date.now();
  strikes = 0;

  constructor(
    private readonly ratePerS: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  take(now = Date.now()): boolean {
    if (this.ratePerS === 0) return true;
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.ratePerS);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      this.strikes = 0;
      return true;
    }
    this.strikes++;
    return false;
  }
}
