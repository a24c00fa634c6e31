/** A sustained rate and how many may go at once: a token bucket's refill rate and size. */
export interface RateBudget {
  ratePerS: number;
  burst: number;
}

/** A budget as the algorithm below reads it: milliseconds per token, and how far ahead the bucket may run. */
export function cellTiming({ ratePerS, burst }: RateBudget): { intervalMs: number; toleranceMs: number } {
  if (!(ratePerS > 0)) throw new RangeError(`ratePerS must be positive, not ${ratePerS}`);
  const intervalMs = 1000 / ratePerS;
  return { intervalMs, toleranceMs: (Math.max(1, burst) - 1) * intervalMs };
}

/**
 * Token buckets by key, as the generic cell rate algorithm: each key keeps one number, the time at
 * which its bucket would be full again, so a key costs a map entry and nothing is refilled on a
 * timer. A take is allowed while that time is at most `(burst - 1)` intervals ahead, and moves it
 * one interval on. Keys whose bucket is full again are swept once the map has doubled since the
 * last sweep, so idle keys cost nothing for long. The Redis intake runs the same arithmetic in Lua
 * (`store/redis/redis-message-intake.ts`) for budgets that every replica spends.
 */
export class RateBudgets {
  private readonly due = new Map<string, number>();
  /** Milliseconds per token. */
  readonly intervalMs: number;
  /** How far ahead of now the full-again time may be for a take to pass. */
  readonly toleranceMs: number;
  private sweepAt = MIN_SWEEP;

  constructor(budget: RateBudget) {
    ({ intervalMs: this.intervalMs, toleranceMs: this.toleranceMs } = cellTiming(budget));
  }

  /** Keys with a bucket that is not full. */
  get size(): number {
    return this.due.size;
  }

  /**
   * Takes `cost` tokens of `key`'s bucket; false (and nothing taken) when it is empty. A bucket
   * with any token left pays a cost larger than what it holds by going into debt, which later
   * takes wait out: an event that costs more than the burst (a broadcast to more clients) still
   * goes, and the sustained rate holds all the same.
   */
  take(key: string, now = Date.now(), cost = 1): boolean {
    const due = Math.max(now, this.due.get(key) ?? now);
    if (due - now > this.toleranceMs) return false;
    this.due.set(key, due + cost * this.intervalMs);
    if (this.due.size >= this.sweepAt) this.sweep(now);
    return true;
  }

  /**
   * Takes `cost` tokens of `key`'s bucket whatever it holds, going into debt that later takes wait
   * out: for what must go (a stream's end) but must still be paid for.
   */
  spend(key: string, now = Date.now(), cost = 1): void {
    this.due.set(key, Math.max(now, this.due.get(key) ?? now) + cost * this.intervalMs);
    if (this.due.size >= this.sweepAt) this.sweep(now);
  }

  /** Tokens `key`'s bucket holds now (0 when empty or in debt). */
  available(key: string, now = Date.now()): number {
    const ahead = Math.max(now, this.due.get(key) ?? now) - now;
    return Math.max(0, Math.floor((this.toleranceMs - ahead) / this.intervalMs) + 1);
  }

  /** Milliseconds until a take of `key` can pass (0: now). */
  waitMs(key: string, now = Date.now()): number {
    return Math.max(0, (this.due.get(key) ?? now) - now - this.toleranceMs);
  }

  private sweep(now: number): void {
    for (const [key, due] of this.due) if (due <= now) this.due.delete(key);
    this.sweepAt = Math.max(MIN_SWEEP, 2 * this.due.size);
  }
}

/** Below this many keys the map is never swept: a small map costs nothing worth the walk. */
const MIN_SWEEP = 1024;
