import type { Deadline, DeadlineQueue } from '../deadline-queue';

const WARNING_MS = 60_000;

/**
 * Calls `onExpiring` 60 s before the token expires (at once if less is left) and `onExpired` at
 * `exp` + tolerance. `reschedule` after a refresh replaces both. Only the next of the two is queued
 * at any time, on the hub's queue: a deadline per idle socket, one Node timer in all. The session
 * extends this class, so the deadline is the session itself: no timer object and no callbacks of
 * its own per socket; the queue and the tolerance, the same for every session, are read from it.
 */
export abstract class SessionTimers implements Deadline {
  dueMs = 0;
  slot = -1;
  private expiresAtMs: number | null = null;
  private warned = false;

  protected abstract get deadlines(): DeadlineQueue;
  /** JWT_CLOCK_TOLERANCE_S in milliseconds. */
  protected abstract get toleranceMs(): number;
  protected abstract onExpiring(expiresAt: string): void;
  protected abstract onExpired(): void;

  reschedule(expiresAtMs: number | null): void {
    this.expiresAtMs = expiresAtMs;
    this.warned = false;
    if (expiresAtMs === null) this.deadlines.remove(this);
    // The warning is due in the past when less than 60 s are left: the queue fires it at once.
    else this.deadlines.add(this, expiresAtMs - WARNING_MS);
  }

  clear(): void {
    this.deadlines.remove(this);
  }

  /** Called by the queue. */
  fire(): void {
    const expiresAtMs = this.expiresAtMs!;
    if (this.warned) return this.onExpired();
    this.warned = true;
    this.deadlines.add(this, expiresAtMs + this.toleranceMs);
    this.onExpiring(new Date(expiresAtMs).toISOString());
  }
}
