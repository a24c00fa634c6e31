import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ThrottledLog } from '../logging/throttled-log';
import type { HubMetrics } from '../metrics/metrics';
import type { LimiterFactory } from './limiter-factory';

/** Length of the counting window. */
export const FAILURE_WINDOW_S = 60;

/** A refusal for too many failures, and when the budget that caused it frees up again. */
export interface FailureLimited {
  retryAfterMs: number;
}

/**
 * Limits failed authentications after rate-limiter-flexible's login-protection pattern, with two
 * budgets of `limitPerMinute` failures:
 *
 * - per address: any failure spends it (refused handshakes on both namespaces and REST 401s,
 *   so guessing through either door uses it up for both). Once spent, a credential that does not
 *   verify gets `RATE_LIMITED` instead of its verdict;
 * - per address and identity (a verified token's `sub`, a verified API key): failures of a holder
 *   of a verified credential (expired, wrong bot, deactivated) spend it too.
 *
 * A verified credential from an address whose budget others spent is let through unless its own
 * identity's budget is spent too: a page that makes its visitors fail (an office, a carrier NAT)
 * cannot lock good users out. That admits a distinguisher (the right secret gets in where a wrong
 * one gets RATE_LIMITED); the secrets are high-entropy (signed tokens, 256-bit keys), so the
 * budget exists to bound verdicts, work and noise, not to make guessing feasible or not.
 *
 * Origin refusals and other refusals that say nothing about credentials spend nothing.
 */
export class AuthFailureLimiter {
  private readonly byAddress: RateLimiterAbstract;
  private readonly byIdentity: RateLimiterAbstract;

  constructor(
    limiters: LimiterFactory,
    private readonly limitPerMinute: number,
    log: ThrottledLog,
    metrics: HubMetrics,
  ) {
    const onFallback = (err: unknown) => {
      metrics.redisErrors.inc({ component: 'auth-failure-limiter' });
      log.warn('auth-failure-limiter', err, 'shared auth-failure counts unavailable; limiting per replica');
    };
    const options = { points: Math.max(1, limitPerMinute), durationS: FAILURE_WINDOW_S, onFallback };
    this.byAddress = limiters.create({ ...options, name: 'auth-fail-ip' });
    this.byIdentity = limiters.create({ ...options, name: 'auth-fail-id' });
  }

  /** Whether `ip` has spent its failures for this window (read only). */
  async addressLimited(ip: string): Promise<FailureLimited | null> {
    if (this.limitPerMinute === 0) return null;
    return spent(await this.byAddress.get(ip), this.limitPerMinute);
  }

  /** Whether `identity` from `ip` has spent its own failures (read only). */
  async identityLimited(ip: string, identity: string): Promise<FailureLimited | null> {
    if (this.limitPerMinute === 0) return null;
    return spent(await this.byIdentity.get(identityKey(ip, identity)), this.limitPerMinute);
  }

  /**
   * Counts a failure of `ip` (and of `identity` when the credential verified). Resolves non-null
   * when the peer must get RATE_LIMITED instead of the failure's own code: each consume is atomic
   * (cluster-wide in Redis), so however many attempts race, an address gets at most
   * `limitPerMinute` verdicts on unverified credentials per window, and an identity as many on its own.
   */
  async recordFailure(ip: string, identity?: string): Promise<FailureLimited | null> {
    if (this.limitPerMinute === 0) return null;
    const [address, own] = await Promise.all([
      consume(this.byAddress, ip),
      identity === undefined ? null : consume(this.byIdentity, identityKey(ip, identity)),
    ]);
    return identity === undefined ? address : own;
  }
}

function identityKey(ip: string, identity: string): string {
  return `${ip}|${identity}`;
}

function spent(res: RateLimiterRes | null, limit: number): FailureLimited | null {
  if (!res || res.consumedPoints < limit) return null;
  return { retryAfterMs: Math.max(1, res.msBeforeNext) };
}

/** Consumes one point; null when within the budget. Store errors reach the caller (fail closed). */
async function consume(limiter: RateLimiterAbstract, key: string): Promise<FailureLimited | null> {
  try {
    await limiter.consume(key);
    return null;
  } catch (err) {
    if (err instanceof RateLimiterRes) return { retryAfterMs: Math.max(1, err.msBeforeNext) };
    throw err;
  }
}
