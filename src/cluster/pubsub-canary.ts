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

/** A probe published and not read back yet: since when, and what its publish said. */
interface Outstanding {
  /** performance.now() when it was published. */
  sentAt: number;
  /** `sending` until Redis answers the publish; `published`: at least one subscriber had it; `lost`: none, or the publish failed. */
  state: 'sending' | 'published' | 'lost';
}

interface Probe {
  lastRoundTripAt: number;
  /** By nonce, oldest first. */
  outstanding: Map<string, Outstanding>;
  misses: number;
}

/** Probes kept waiting per channel: a later one read back settles the earlier ones too. */
const MAX_OUTSTANDING = 16;

/**
 * A probe published through Redis to this replica's own channels and read back by its subscriber:
 * one channel on one server, one per shard on a Cluster (`channels()` is asked before every round,
 * so shards that appear are probed too). Readiness follows the probes, so a replica whose
 * subscription silently died, or one of whose shards is failing over, turns unready; after a few
 * misses with both connections up it calls `resubscribe`, and if that does not help, it
 * reconnects the subscriber.
 *
 * A probe that is late is not lost: with big messages on a busy machine, Redis's output to the
 * subscriber, or the replica's reading of it, can run seconds behind, and the probe waits behind
 * what was published before it (docs/operations.md, "Redis command deadlines"). A round with a
 * probe outstanding counts as a miss only when the probe cannot merely be late: its publish failed
 * or reached no subscriber, or Redis took it and the subscriber read nothing since the last round
 * (any message counts, whichever shard it came from). A probe read back settles every probe
 * published before it.
 */
export class PubSubCanary {
  private readonly probes = new Map<string, Probe>();
  private timer?: NodeJS.Timeout;
  /** Whether the subscriber read any message since the last round. */
  private heard = false;

  constructor(
    private readonly pub: RedisClient,
    private readonly sub: RedisClient,
    private readonly channels: ShardedChannels,
    private readonly channelsToProbe: () => string[],
    private readonly resubscribe: () => void,
    private readonly report: RedisErrorReporter,
    private readonly options: CanaryOptions,
  ) {
    const hear = () => void (this.heard = true);
    for (const event of ['smessageBuffer', 'messageBuffer']) sub.on(event, hear);
    this.track();
  }

  start(): void {
    this.round();
    // In the turn's check phase, after its poll phase: a replica whose event loop was blocked for a
    // while reads what its subscriber received meanwhile before the round judges the probes.
    this.timer = setInterval(() => setImmediate(() => this.timer !== undefined && this.round()), this.options.intervalMs);
    this.timer.unref();
  }

  healthy(): boolean {
    if (this.probes.size === 0) return false;
    const now = Date.now();
    for (const probe of this.probes.values()) if (now - probe.lastRoundTripAt >= this.options.staleAfterMs) return false;
    return true;
  }

  /**
   * Forgets the probes published so far: the subscriptions were restored, so a probe published
   * before (say, in the moment the subscriber's connection was gone, which Redis answers with no
   * receivers) says nothing about them, and counting it would find a loss that was already
   * recovered from and end every session a second time.
   */
  forget(): void {
    for (const probe of this.probes.values()) {
      probe.outstanding.clear();
      probe.misses = 0;
    }
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
      const probe: Probe = { lastRoundTripAt: 0, outstanding: new Map(), misses: 0 };
      this.probes.set(channel, probe);
      this.channels.subscribe(channel, (message) => {
        const nonce = message.toString();
        const arrived = probe.outstanding.get(nonce);
        if (arrived === undefined) return;
        this.options.onRoundTrip?.((performance.now() - arrived.sentAt) / 1000);
        // Messages on one channel arrive in the order published: the earlier probes are not coming.
        for (const earlier of probe.outstanding.keys()) {
          probe.outstanding.delete(earlier);
          if (earlier === nonce) break;
        }
        probe.misses = 0;
        probe.lastRoundTripAt = Date.now();
      });
    }
  }

  private round(): void {
    const bothUp = this.pub.status === 'ready' && this.sub.status === 'ready';
    if (bothUp) this.track();
    const heard = this.heard;
    this.heard = false;
    let missed = 0;
    for (const [channel, probe] of this.probes) {
      if (bothUp && this.missing(probe, heard)) missed = Math.max(missed, ++probe.misses);
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

  /** Whether `probe` has one outstanding that is lost, not late (`heard`: the subscriber read something since the last round). */
  private missing(probe: Probe, heard: boolean): boolean {
    if (probe.outstanding.size === 0) return false;
    let published = false;
    for (const { state } of probe.outstanding.values()) {
      if (state === 'lost') return true;
      if (state === 'published') published = true;
    }
    // All still being published: the command connection's deadline fails them if Redis is silent.
    return published && !heard;
  }

  private probe(channel: string, probe: Probe): void {
    const nonce = randomUUID();
    const sent: Outstanding = { sentAt: performance.now(), state: 'sending' };
    probe.outstanding.set(nonce, sent);
    if (probe.outstanding.size > MAX_OUTSTANDING) probe.outstanding.delete(probe.outstanding.keys().next().value!);
    this.pub.spublish(channel, nonce).then(
      (receivers) => {
        if (Number(receivers) > 0) {
          sent.state = 'published';
          return;
        }
        sent.state = 'lost';
        // Nobody subscribed: the subscription is gone for sure, no need to wait for misses.
        if (probe.outstanding.has(nonce)) probe.misses = Math.max(probe.misses, this.options.resubscribeAfterMisses - 1);
      },
      (err: unknown) => {
        sent.state = 'lost';
        this.report('canary', err, 'pub/sub probe could not be published');
      },
    );
  }
}
