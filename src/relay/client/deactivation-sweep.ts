import type { Namespace } from 'socket.io';
import type { Logger } from '../../logging/logger';
import type { HubMetrics } from '../../metrics/metrics';
import { Events, SessionClosedCodes } from '../../protocol';
import type { DeactivationStore } from '../../store/store';
import type { ClientSocketData } from '../relay.context';
import { Rooms } from '../rooms';

/**
 * Makes live sessions converge on deactivations even when the broadcast that ends them was lost
 * (a replica that was cut off from Redis pub/sub, a publish that failed): every `intervalS`, this
 * replica asks the store which subjects of its own client sockets are deactivated, in batches, and
 * closes their sessions here with `session:closed` USER_DEACTIVATED. One per hub; `start()` and
 * `stop()` run its timer.
 */
export class DeactivationSweep {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly nsp: Namespace,
    private readonly deactivations: DeactivationStore,
    private readonly intervalS: number,
    private readonly logger: Logger,
    private readonly metrics: HubMetrics,
  ) {}

  start(): void {
    if (this.intervalS === 0 || this.timer) return;
    this.timer = setInterval(() => void this.sweep(), this.intervalS * 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass; a pass still running is not doubled. Resolves with nothing; failures are logged. */
  sweep(): Promise<void> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<void> {
    const subs = new Set<string>();
    for (const socket of this.nsp.sockets.values()) subs.add((socket.data as ClientSocketData).sub);
    if (subs.size === 0) return;
    let deactivated: Set<string>;
    try {
      deactivated = await this.deactivations.deactivatedAmong([...subs]);
    } catch (err) {
      this.metrics.redisErrors.inc({ component: 'deactivation-sweep' });
      this.logger.warn({ err }, 'deactivation re-check failed; next pass retries');
      return;
    }
    for (const sub of deactivated) {
      this.logger.info({ sub }, 'closing sessions of a deactivated user (re-check)');
      const local = this.nsp.local.in(Rooms.subject(sub));
      local.emit(Events.sessionClosed, { code: 'USER_DEACTIVATED', retryable: SessionClosedCodes.USER_DEACTIVATED.retryable });
      local.disconnectSockets();
    }
  }
}
