import type { Logger } from '../logging/logger';
import type { HubMetrics } from '../metrics/metrics';

/**
 * What noticed that subscriptions were lost: the subscriber connection, a Cluster shard's subscriber
 * connection, Redis unsubscribing the channels of a slot moved to another master, the canary.
 */
export type LossTrigger = 'connection' | 'shard' | 'moved' | 'canary';

export interface RecoveryOptions {
  /** Subscribes every channel this replica needs again; resolves once Redis confirmed all of them. */
  resubscribe(): Promise<void>;
  /** Whether the subscriber connection is up (an attempt before that cannot succeed). */
  connected(): boolean;
  logger: Logger;
  metrics: HubMetrics;
  /** How long after a failed attempt the next one starts. */
  retryMs: number;
  /**
   * How long an attempt may take before it counts as failed: an SSUBSCRIBE that a node answers
   * MOVED (its slot moved) never settles in ioredis, which only refreshes the slot map.
   */
  attemptTimeoutMs: number;
  /** Told each time every channel is subscribed again. */
  restored(): void;
}

/**
 * Whether this replica's pub/sub subscriptions are all in place, and their restoration after any
 * loss (docs/operations.md, "Redis failover"): a dropped subscriber connection, one Cluster shard's
 * subscriber lost in a failover or a node restart, a slot moved to another master, or
 * subscriptions the canary found dead. From the
 * loss until every channel is subscribed again it is not {@link intact} (handshakes are refused),
 * and it keeps trying, every `retryMs`, for as long as that takes: a single attempt can fail in the
 * middle of a failover (the shard has no master yet), and nothing else would try again once the
 * canary's probes pass. Each recovery is logged at its start and its end, with its duration, and
 * measured (`relay_redis_subscription_gap`, `relay_redis_subscription_recovery_seconds`).
 */
export class SubscriptionRecovery {
  private whole: boolean;
  /** Sessions open during the loss have not been ended yet (see {@link onGap}). */
  private gap = false;
  private lost: { at: number; trigger: LossTrigger } | undefined;
  /** The attempt under way; one started before a later loss does not count. */
  private attempt: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly gapListeners: (() => void)[] = [];

  constructor(
    private readonly options: RecoveryOptions,
    intact: boolean,
  ) {
    this.whole = intact;
  }

  /** Whether everything published to this replica's channels reaches it. */
  intact(): boolean {
    return this.whole;
  }

  /** `listener` is told when sessions opened before a loss must end (what was published meanwhile passed them by). */
  onGap(listener: () => void): void {
    this.gapListeners.push(listener);
  }

  /**
   * Subscriptions were lost: not intact until {@link restore} succeeds. `gap`: messages may have
   * been missed (not so for a connection that never had subscriptions).
   */
  lose(trigger: LossTrigger, gap = true): void {
    if (this.closed) return;
    this.whole = false;
    if (gap) this.gap = true;
    this.attempt = undefined;
    if (this.lost === undefined) {
      this.lost = { at: performance.now(), trigger };
      this.options.metrics.subscriptionGap.set(1);
      this.options.logger.warn({ trigger }, 'Redis subscriptions lost; refusing client handshakes until they are restored');
    }
    this.schedule();
  }

  /**
   * The subscriber (or a shard's) is connected again: ends the sessions opened before the loss
   * now, before any message of the new subscriptions can reach them (the caller runs this in the
   * turn the connection came back), then restores.
   */
  reconnected(): void {
    this.endGap();
    // An attempt made before may hang (an SSUBSCRIBE to a slot's old master is never answered).
    this.attempt = undefined;
    this.restore();
  }

  /** Starts an attempt to subscribe everything again, unless intact or one is under way. */
  restore(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    if (this.closed || this.attempt !== undefined) return;
    if (!this.options.connected()) {
      // Its `ready` restores too; polling as well covers a Cluster, whose shards come back without one.
      if (!this.whole) this.schedule();
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('resubscribing timed out')), this.options.attemptTimeoutMs);
      timer.unref();
    });
    const attempt = Promise.race([this.options.resubscribe(), late])
      .finally(() => clearTimeout(timer))
      .then(
        () => {
          if (this.attempt !== attempt || this.closed) return;
          this.attempt = undefined;
          this.recovered();
        },
        () => {
          if (this.attempt !== attempt || this.closed) return;
          this.attempt = undefined;
          this.schedule();
        },
      );
    this.attempt = attempt;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
  }

  private recovered(): void {
    this.whole = true;
    this.options.restored();
    // Sessions opened before the loss end now at the latest.
    this.endGap();
    if (this.lost === undefined) return;
    const { at, trigger } = this.lost;
    this.lost = undefined;
    const seconds = (performance.now() - at) / 1000;
    this.options.metrics.subscriptionGap.set(0);
    this.options.metrics.subscriptionRecovery.observe({ trigger }, seconds);
    this.options.logger.warn(
      { trigger, durationMs: Math.round(seconds * 1000) },
      'Redis subscriptions restored; accepting client handshakes again',
    );
  }

  private endGap(): void {
    if (!this.gap || this.closed) return;
    this.gap = false;
    for (const listener of this.gapListeners) listener();
  }

  private schedule(): void {
    if (this.retry !== undefined || this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.whole) this.restore();
    }, this.options.retryMs);
    this.retry.unref();
  }
}
