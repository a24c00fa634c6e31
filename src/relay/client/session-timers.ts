import { DeadlineQueue, type Deadline } from '../deadline-queue';

/** One queue for every session of the process: a deadline per idle socket, one Node timer in all. */
const sessionDeadlines = new DeadlineQueue();

const WARNING_MS = 60_000;

/**
 * Fires `onExpiring` 60 s before the token expires (at once if less is left) and `onExpired` at
 * `exp` + tolerance. `reschedule` after a refresh replaces both. Only the next of the two is queued
 * at any time.
 */
export class SessionTimers implements Deadline {
  dueMs = 0;
  slot = -1;
  private expiresAtMs: number | null = null;
  private warned = false;

  constructor(
    private readonly toleranceMs: number,
    private readonly onExpiring: (expiresAt: string) => void,
    private readonly onExpired: () => void,
  ) {}

  reschedule(expiresAtMs: number | null): void {
    this.expiresAtMs = expiresAtMs;
    this.warned = false;
    if (expiresAtMs === null) sessionDeadlines.remove(this);
    // The warning is due in the past when less than 60 s are left: the queue fires it at once.
    else sessionDeadlines.add(this, expiresAtMs - WARNING_MS);
  }

  clear(): void {
    sessionDeadlines.remove(this);
  }

  /** Called by the queue. */
  fire(): void {
    const expiresAtMs = this.expiresAtMs!;
    if (this.warned) return this.onExpired();
    this.warned = true;
    sessionDeadlines.add(this, expiresAtMs + this.toleranceMs);
    this.onExpiring(new Date(expiresAtMs).toISOString());
  }
}
