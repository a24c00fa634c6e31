import { RateBudgets } from '../limits/rate-budgets';
import type { Tally } from '../metrics/metrics';
import type { RelayContext } from './relay.context';

/**
 * What one user (token `sub`) may ask of this replica over all their sockets, besides messages
 * (which the store's intake budgets on every replica): feedback and stop, at USER_MESSAGE_RATE_PER_S
 * / _BURST. Per socket they are bounded already (MESSAGE_RATE_*), but a user holding 50 sockets sent
 * 17,150 feedback events with 1,000-character comments in 21 s, each a log write and a delivery to
 * the bot (docs/operations.md, budgets per user). And the bytes they read from the log, replays and
 * history pages, at USER_READ_BYTES_PER_S / _BURST: a user reconnecting in a loop with an old
 * lastMessageId was replayed 1.6 GB in 20 s, each socket's history budget starting full.
 */
export class UserBudgets {
  private readonly actions: RateBudgets | null;
  private readonly reads: RateBudgets | null;
  private readonly limited: Tally;

  constructor(ctx: RelayContext) {
    const { USER_MESSAGE_RATE_PER_S: ratePerS, USER_MESSAGE_RATE_BURST: burst } = ctx.config;
    this.actions = ratePerS === 0 ? null : new RateBudgets({ ratePerS, burst });
    const { USER_READ_BYTES_PER_S: bytesPerS, USER_READ_BYTES_BURST: bytesBurst } = ctx.config;
    this.reads = bytesPerS === 0 ? null : new RateBudgets({ ratePerS: bytesPerS, burst: bytesBurst });
    this.limited = ctx.metrics.rateLimited.bind({ scope: 'user' });
  }

  /** Spends one action of `sub`'s budget; false (counted) when it is spent. */
  act(sub: string): boolean {
    if (this.actions === null || this.actions.take(sub)) return true;
    this.limited.add();
    return false;
  }

  /** Bytes `sub` may read from the log now (Infinity: unlimited); 0 is counted as a refusal. */
  readable(sub: string): number {
    if (this.reads === null) return Number.POSITIVE_INFINITY;
    const bytes = this.reads.available(sub);
    if (bytes === 0) this.limited.add();
    return bytes;
  }

  /** Spends `bytes` read by `sub`. */
  read(sub: string, bytes: number): void {
    if (this.reads !== null && bytes > 0) this.reads.spend(sub, Date.now(), bytes);
  }
}
