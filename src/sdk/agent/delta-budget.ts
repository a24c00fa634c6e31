/** The delta rate a runtime keeps to: the hub's `STREAM_DELTA_RATE_PER_S` / `_BURST`, per socket. */
export interface DeltaRate {
  /** Sustained deltas per second (default 180, under the hub's default 200). */
  perS?: number;
  /** Burst (default 360, under the hub's default 400). */
  burst?: number;
}

/**
 * A token bucket shared by every stream of one runtime, mirroring the hub's per-socket bucket for
 * `stream:delta`. The hub answers a delta beyond its bucket with `RATE_LIMITED` and drops it, and
 * a delta sent without an ack would leave a hole in the text unnoticed; so a stream that finds the
 * bucket empty keeps coalescing its writes until a token is due, and no text is lost. Kept a little
 * under the hub's defaults, since deltas bunch up on the network between the two buckets.
 */
export class DeltaBudget {
  private readonly perMs: number;
  private readonly burst: number;
  private tokens: number;
  private at: number;

  constructor(
    rate: DeltaRate = {},
    private readonly now: () => number = () => performance.now(),
  ) {
    const perS = rate.perS ?? 180;
    this.burst = rate.burst ?? 360;
    if (!(perS > 0) || !(this.burst >= 1)) throw new TypeError('RelayAgent: deltaRate needs perS > 0 and burst ≥ 1');
    this.perMs = perS / 1000;
    this.tokens = this.burst;
    this.at = this.now();
  }

  /** Takes a token when one is there; else returns the milliseconds until one is due. */
  take(): number {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - this.tokens) / this.perMs);
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (now - this.at) * this.perMs);
    this.at = now;
  }
}
