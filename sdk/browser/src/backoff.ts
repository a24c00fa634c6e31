import { positive } from './checks';

/** Reconnect delay settings. */
export interface BackoffOptions {
  /** Upper bound of the first delay, in ms. Default 500. */
  baseMs?: number;
  /** No delay exceeds this, in ms. Default 5000. */
  capMs?: number;
}

/**
 * 5 s: a widget whose hub was down waits for its next attempt a random part of the cap, so 95 % of
 * widgets are back within about 0.78 × cap of the hub answering again (under 5 s measured with 2,000
 * widgets; 23.5 s with the former 30 s cap). What it costs: while the hub is down each widget tries
 * every 2.5 s on average (docs/soak.md, "Time back after an outage").
 */
export const DEFAULT_BACKOFF = { baseMs: 500, capMs: 5_000 } as const;

/**
 * Exponential backoff with full jitter: attempt n waits a uniform random time in
 * [0, min(cap, base · 2ⁿ)). Full jitter keeps a crowd of clients that lost the same replica from
 * reconnecting in lockstep.
 */
export class Backoff {
  private readonly baseMs: number;
  private readonly capMs: number;
  private attempt = 0;

  constructor(
    options: BackoffOptions = {},
    private readonly random: () => number = Math.random,
  ) {
    this.baseMs = positive(options.baseMs, DEFAULT_BACKOFF.baseMs, 'backoff.baseMs');
    this.capMs = Math.max(this.baseMs, positive(options.capMs, DEFAULT_BACKOFF.capMs, 'backoff.capMs'));
  }

  /** Attempts since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  /** The upper bound of the delay the next call to {@link next} draws from. */
  bound(): number {
    // Clamping the exponent keeps 2ⁿ finite however long the outage lasts.
    return Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.attempt, 30));
  }

  /** Draws the next delay and advances the attempt counter. */
  next(): number {
    const delay = Math.floor(this.random() * this.bound());
    this.attempt++;
    return delay;
  }

  /** Call after a successful connect. */
  reset(): void {
    this.attempt = 0;
  }
}
