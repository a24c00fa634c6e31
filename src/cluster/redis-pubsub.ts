import type { Cluster as ClusterType, Redis } from 'ioredis';
import { Cluster } from 'ioredis';
import { Counter, Histogram } from 'prom-client';
import type { Logger } from '../logging/logger';
import type { HubMetrics } from '../metrics/metrics';
import { shardedSubscribersUp, slotMovedAway } from '../internals/ioredis.internals';
import type { SubscriptionRecovery } from './subscription-recovery';

// The subscriber connection of a replica: what it receives, counted by purpose, and how its
// reconnections and a Redis Cluster's shard changes reach the subscription recovery.

/** What the pub/sub messages received on `sub` are for, from their channel's name. */
export type PubSubKind = 'adapter' | 'dispatch' | 'canary';

/** Counts the messages and payload bytes `sub` receives, by {@link PubSubKind}. */
export function countPubSubMessages(sub: Redis | ClusterType, metrics: HubMetrics, kindOf: (channel: string) => PubSubKind): void {
  const received = new Counter({
    name: 'relay_redis_pubsub_messages_received_total',
    help: 'Pub/sub messages this replica received from Redis, by purpose (adapter, dispatch, canary)',
    labelNames: ['kind'] as const,
    registers: [metrics.registry],
  });
  const receivedBytes = new Counter({
    name: 'relay_redis_pubsub_bytes_received_total',
    help: 'Payload bytes of pub/sub messages this replica received from Redis, by purpose',
    labelNames: ['kind'] as const,
    registers: [metrics.registry],
  });

  const countReceived = (channel: Buffer, message: Buffer) => {
    const name = channel.toString();
    const kind = kindOf(name);
    received.inc({ kind });
    receivedBytes.inc({ kind }, message.length);
  };
  sub.on('smessageBuffer', countReceived);
  sub.on('messageBuffer', countReceived);
  sub.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, message: Buffer) => countReceived(channel, message));
}

/** Observes the canary's round trips: every message between replicas takes this hop, so it is their latency. */
export function canaryRoundTrip(metrics: HubMetrics): (seconds: number) => void {
  const roundTrip = new Histogram({
    name: 'relay_redis_pubsub_roundtrip_seconds',
    help: 'Seconds from publishing a pub/sub canary probe to this replica receiving it back through Redis',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics.registry],
  });
  return (seconds) => roundTrip.observe(seconds);
}

/**
 * Tells `recovery` when `sub` loses its subscriptions (its connection closed, a Cluster shard's
 * connection ended, a resharding moved a slot away) and when they can be restored.
 */
export function followSubscriber(
  sub: Redis | ClusterType,
  recovery: SubscriptionRecovery,
  logger: Logger,
  subReady: boolean,
  closing: () => boolean,
): void {
  let subWasReady = subReady;
  sub.on('close', () => {
    if (!closing()) recovery.lose('connection', subWasReady);
  });
  sub.on('ready', () => {
    if (subWasReady) logger.warn('Redis subscriber reconnected; restoring subscriptions');
    subWasReady = true;
    // Synchronously, before the first message of the new subscriptions can arrive.
    recovery.reconnected();
  });
  if (sub instanceof Cluster) {
    // A shard's subscriber connection ended (its master failed or restarted) while the Cluster as a
    // whole stays ready: no `close` or `ready` of its own. ioredis follows the new slot map and
    // subscribes the shard's channels again on the new master, then says `subscribersReady`.
    sub.on('-node', (_redis: unknown, shard?: string) => {
      if (shard !== undefined && !closing()) recovery.lose('shard');
    });
    // Resharding: Redis unsubscribed this replica from the channels of a slot it moved elsewhere.
    // Subscribing them again gets MOVED, on which ioredis refreshes its slot map and resubscribes.
    sub.on('nodeError', (err: unknown) => {
      if (slotMovedAway(err) && !closing()) recovery.lose('moved');
    });
    // Also said after a reset whose new subscriber failed (the shard has no master yet): the
    // sessions end when the shard is back, not before, or their clients would be refused meanwhile.
    sub.on('subscribersReady', () => {
      if (recovery.intact()) return;
      if (shardedSubscribersUp(sub)) recovery.reconnected();
      else recovery.restore();
    });
  }
}
