/** Node clamps timeouts above 2^31-1 ms to 1 ms; longer waits are taken in steps. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Fires `onExpiring` 60 s before the token expires (at once if less is left) and `onExpired` at
 * `exp` + tolerance. `reschedule` after a refresh replaces both.
 */
export class SessionTimers {
  private expiring?: NodeJS.Timeout;
  private expired?: NodeJS.Timeout;

  constructor(
    private readonly toleranceMs: number,
    private readonly onExpiring: (expiresAt: string) => void,
    private readonly onExpired: () => void,
  ) {}

  reschedule(expiresAtMs: number | null): void {
    this.clear();
    if (expiresAtMs === null) return;
    const expiresAt = new Date(expiresAtMs).toISOString();
    this.expiring = at(expiresAtMs - 60_000, () => this.onExpiring(expiresAt), (t) => (this.expiring = t));
    this.expired = at(expiresAtMs + this.toleranceMs, () => this.onExpired(), (t) => (this.expired = t));
  }

  clear(): void {
    clearTimeout(this.expiring);
    clearTimeout(this.expired);
  }
}

function at(whenMs: number, fire: () => void, track: (timer: NodeJS.Timeout) => void): NodeJS.Timeout {
  const delay = whenMs - Date.now();
  if (delay > MAX_TIMEOUT_MS) {
    return setTimeout(() => track(at(whenMs, fire, track)), MAX_TIMEOUT_MS);
  }
  return setTimeout(fire, Math.max(0, delay));
}
