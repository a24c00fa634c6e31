import type { ThrottledLog } from '../../logging/throttled-log';
import type { ConversationControl } from './conversation-control';

/**
 * Runs the idle hand-back on every replica every HANDOFF_SWEEP_MS (docs/handoff.md): the held
 * conversations live in shared state, so no replica keeps a timer per conversation, and a
 * conversation whose operator's replica died is handed back all the same.
 */
export class IdleHandback {
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly control: ConversationControl,
    private readonly everyMs: number,
    private readonly failures: ThrottledLog,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.sweep(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One sweep; a sweep still running is not overlapped. */
  async sweep(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.control.sweepIdle();
    } catch (err) {
      this.failures.warn('handoff-sweep', err, 'the idle hand-back sweep failed; it runs again');
    } finally {
      this.running = false;
    }
  }
}
