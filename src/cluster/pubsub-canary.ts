import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../store/redis/redis-client';
import type { RedisErrorReporter } from './redis-connections';
import type { ShardedChannels } from './sharded-channels';

export interface CanaryOptions {
  intervalMs: number;
  /** The probe counts as healthy while its last round trip is younger than this. */
  staleAfterMs: number;
  /** Consecutive missed probes (with both connections up) after which subscriptions are restored. */
  resubscribeAfterMisses: number;
  /** Told the seconds from each probe's publish to its arrival at the subscriber. */
  onRoundTrip?: (seconds: number) => void;
}

interface Probe {
  lastRoundTripAt: number;
  pendingNonce: string | null;
  /** performance.now() when the pending probe was published. */
  sentAt: number;
  /** performance.now() when the pending probe's publish was answered (a reply or an error); null while in flight. */
  answeredAt: number | null;
  misses: number;
}

/**
 * A probe published through Redis to this replica's own channels and read back by its subscriber:
 * one channel on one server, one per shard on a Cluster (`channels()` is asked before every round,
 * so shards that appear are probed too). Readiness follows the probes, so a replica whose
 * subscription silently died, or one of whose shards is failing over, turns unready; after a few
 * misses with both connections up it calls `resubscribe`, and if that does not help, it
 * reconnects the subscriber.
 */
export class PubSubCanary {
  private readonly probes = new Map<string, Probe>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly pub: RedisClient,
    private readonly sub: RedisClient,
    private readonly channels: ShardedChannels,
    private readonly channelsToProbe: () => string[],
    private readonly resubscribe: () => void,
    private readonly report: RedisErrorReporter,
    private readonly options: CanaryOptions,
  ) {
    this.track();
  }

  start(): void {
    this.timer = setInterval(() => this.round(), this.options.intervalMs);
    this.timer.unref();
    this.judge(performance.now());
  }

  healthy(): boolean {
    if (this.probes.size === 0) return false;
    const now = Date.now();
    for (const probe of this.probes.values()) if (now - probe.lastRoundTripAt >= this.options.staleAfterMs) return false;
    return true;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Subscribes to channels new in `channelsToProbe()`, forgets those gone from it. */
  private track(): void {
    const wanted = new Set(this.channelsToProbe());
    for (const channel of this.probes.keys()) if (!wanted.has(channel)) this.probes.delete(channel);
    for (const channel of wanted) {
      if (this.probes.has(channel)) continue;
      const probe: Probe = { lastRoundTripAt: 0, pendingNonce: null, sentAt: 0, answeredAt: null, misses: 0 };
      this.probes.set(channel, probe);
      this.channels.subscribe(channel, (message) => {
        if (message.toString() === probe.pendingNonce) {
          this.options.onRoundTrip?.((performance.now() - probe.sentAt) / 1000);
          probe.pendingNonce = null;
          probe.misses = 0;
          probe.lastRoundTripAt = Date.now();
        }
      });
    }
  }

  /**
   * A slow event loop is not a lost subscription (docs/architecture.md, "When Redis fails"): a
   * probe counts as missed only once its publish was answered before the round began, so that a
   * poll phase, which reads what arrived on the subscriber meanwhile, has run since Redis sent it
   * back; the interval runs in the timers phase, before that turn's poll phase, so the probes are
   * judged in the check phase (`setImmediate`), after it. A loop blocked or starved of CPU reads the
   * publish's reply late, and its probe is neither counted nor replaced until then (its echo still
   * counts when read). Redis not answering at all fails the publish at the command deadline, and
   * the probe then counts.
   */
  private round(): void {
    const startedAt = performance.now();
    setImmediate(() => this.judge(startedAt));
  }

  private judge(roundAt: number): void {
    if (this.timer === undefined) return; // stopped meanwhile
    const bothUp = this.pub.status === 'ready' && this.sub.status === 'ready';
    if (bothUp) this.track();
    let missed = 0;
    for (const [channel, probe] of this.probes) {
      if (probe.pendingNonce !== null && bothUp) {
        if (probe.answeredAt === null || probe.answeredAt >= roundAt) continue;
        missed = Math.max(missed, ++probe.misses);
      }
      if (bothUp) this.probe(channel, probe);
    }
    if (missed === this.options.resubscribeAfterMisses) {
      this.report('canary', new Error('pub/sub probe not received'), 'pub/sub probe lost with Redis up; resubscribing');
      this.resubscribe();
    } else if (missed >= 2 * this.options.resubscribeAfterMisses) {
      this.report('canary', new Error('pub/sub probe not received after resubscribing'), 'reconnecting the subscriber');
      for (const probe of this.probes.values()) probe.misses = 0;
      this.sub.disconnect(true);
    }
  }

  private probe(channel: string, probe: Probe): void {
    const nonce = randomUUID();
    probe.pendingNonce = nonce;
    probe.sentAt = performance.now();
    probe.answeredAt = null;
    const answered = () => {
      if (probe.pendingNonce === nonce) probe.answeredAt = performance.now();
    };
    this.pub.spublish(channel, nonce).then(
      (receivers) => {
        answered();
        // Nobody subscribed: the subscription is gone for sure, no need to wait for misses.
        if (Number(receivers) === 0 && probe.pendingNonce === nonce)
          probe.misses = Math.max(probe.misses, this.options.resubscribeAfterMisses - 1);
      },
      (err: unknown) => {
        answered();
        this.report('canary', err, 'pub/sub probe could not be published');
      },
    );
  }
}
