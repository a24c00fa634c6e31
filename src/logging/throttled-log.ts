import type { Logger } from './logger';

/**
 * Logs an error at most once per `intervalMs` per key, with the number of occurrences suppressed
 * since the last line, so an outage produces a steady trickle of lines instead of a flood.
 */
export class ThrottledLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs = 5000,
  ) {}

  /** `logger` overrides the constructor's for this line (e.g. a per-connection child logger). */
  warn(key: string, err: unknown, message: string, logger: Logger = this.logger): void {
    const now = Date.now();
    const entry = this.last.get(key);
    if (entry && now - entry.at < this.intervalMs) {
      entry.suppressed++;
      return;
    }
    logger.warn({ err, suppressed: entry?.suppressed ?? 0 }, message);
    this.last.set(key, { at: now, suppressed: 0 });
  }
}
