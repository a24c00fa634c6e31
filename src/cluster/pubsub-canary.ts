import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { RedisErrorReporter } from './redis-connections';
import type { ShardedChannels } from './sharded-channels';

export interface CanaryOptions {
  intervalMs: number;
  /** The probe counts as healthy while its last round trip is younger than this. */
  staleAfterMs: number;
  /** Consecutive missed probes (with both connections up) after which subscriptions are restored. */
  resubscribeAfterMisses: number;
}

/**
 * A probe published through Redis to this replica's own channel and read back by its subscriber.
 * Readiness follows it, so a replica whose subscription silently died turns unready; after a few
 * misses with both connections up it calls `resubscribe`, and if that does not help, it reconnects
 * the subscriber.
 */
export class PubSubCanary {
  private lastRoundTripAt = 0;
  private pendingNonce: string | null = null;
  private misses = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    channels: ShardedChannels,
    private readonly channel: string,
    private readonly resubscribe: () => void,
    private readonly report: RedisErrorReporter,
    private readonly options: CanaryOptions,
  ) {
    channels.subscribe(channel, (message) => {
      if (message.toString() === this.pendingNonce) {
        this.pendingNonce = null;
        this.misses = 0;
        this.lastRoundTripAt = Date.now();
      }
    });
  }

  start(): void {
    this.probe();
    this.timer = setInterval(() => this.probe(), this.options.intervalMs);
    this.timer.unref();
  }

  healthy(): boolean {
    return Date.now() - this.lastRoundTripAt < this.options.staleAfterMs;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private probe(): void {
    const bothUp = this.pub.status === 'ready' && this.sub.status === 'ready';
    if (this.pendingNonce !== null && bothUp) {
      this.misses++;
      if (this.misses === this.options.resubscribeAfterMisses) {
        this.report('canary', new Error('pub/sub probe not received'), 'pub/sub probe lost with Redis up; resubscribing');
        this.resubscribe();
      } else if (this.misses === 2 * this.options.resubscribeAfterMisses) {
        this.report('canary', new Error('pub/sub probe not received after resubscribing'), 'reconnecting the subscriber');
        this.misses = 0;
        this.sub.disconnect(true);
      }
    }
    if (!bothUp) return;
    const nonce = randomUUID();
    this.pendingNonce = nonce;
    this.pub.spublish(this.channel, nonce).then(
      (receivers) => {
        // Nobody subscribed: the subscription is gone for sure, no need to wait for misses.
        if (Number(receivers) === 0 && this.pendingNonce === nonce) this.misses = this.options.resubscribeAfterMisses - 1;
      },
      (err: unknown) => this.report('canary', err, 'pub/sub probe could not be published'),
    );
  }
}
