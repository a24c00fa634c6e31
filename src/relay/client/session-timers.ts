import type { Deadline, DeadlineQueue } from '../deadline-queue';

const WARNING_MS = 60_000;

/**
 * Fires `onExpiring` 60 s before the token expires (at once if less is left) and `onExpired` at
 * `exp` + tolerance. `reschedule` after a refresh replaces both. Only the next of the two is queued
 * at any time, on the hub's queue: a deadline per idle socket, one Node timer in all.
 */
export class SessionTimers implements Deadline {
  dueMs = 0;
  slot = -1;
  private expiresAtMs: number | null = null;
  private warned = false;

  constructor(
    private readonly queue: DeadlineQueue,
    private readonly toleranceMs: number,
    private readonly onExpiring: (expiresAt: string) => void,
    private readonly onExpired: () => void,
  ) {}

  reschedule(expiresAtMs: number | null): void {
    this.expiresAtMs = expiresAtMs;
    this.warned = false;
    if (expiresAtMs === null) this.queue.remove(this);
    // The warning is due in the past when less than 60 s are left: the queue fires it at once.
    else this.queue.add(this, expiresAtMs - WARNING_MS);
  }

  clear(): void {
    this.queue.remove(this);
  }

  /** Called by the queue. */
  fire(): void {
    const expiresAtMs = this.expiresAtMs!;
    if (this.warned) return this.onExpired();
    this.warned = true;
    this.queue.add(this, expiresAtMs + this.toleranceMs);
    this.onExpiring(new Date(expiresAtMs).toISOString());
  }
}
