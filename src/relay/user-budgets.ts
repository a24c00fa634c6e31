import { RateBudgets } from '../limits/rate-budgets';
import type { Tally } from '../metrics/metrics';
import type { RelayContext } from './relay.context';

/**
 * What one user (token `sub`) may ask of this replica over all their sockets, besides messages
 * (which the store's intake budgets on every replica): feedback and stop, at USER_MESSAGE_RATE_PER_S
 * / _BURST. Per socket they are bounded already (MESSAGE_RATE_*), but a user holding 50 sockets sent
 * 17,150 feedback events with 1,000-character comments in 21 s, each a log write and a delivery to
 * the bot (docs/operations.md, budgets per user).
 */
export class UserBudgets {
  private readonly actions: RateBudgets | null;
  private readonly limited: Tally;

  constructor(ctx: RelayContext) {
    const { USER_MESSAGE_RATE_PER_S: ratePerS, USER_MESSAGE_RATE_BURST: burst } = ctx.config;
    this.actions = ratePerS === 0 ? null : new RateBudgets({ ratePerS, burst });
    this.limited = ctx.metrics.rateLimited.bind({ scope: 'user' });
  }

  /** Spends one action of `sub`'s budget; false (counted) when it is spent. */
  act(sub: string): boolean {
    if (this.actions === null || this.actions.take(sub)) return true;
    this.limited.add();
    return false;
  }
}
