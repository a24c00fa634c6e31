import { createRequire } from 'node:module';
import type { Cluster } from 'ioredis';

/**
 * On a Redis Cluster with `shardedSubscribers`, ioredis keeps one subscriber connection per master
 * in a `ClusterSubscriberGroup`, whose `reset()` (after every slots refresh) runs one at a time: a
 * call made while one runs is kept as `pendingReset` and run when it ends. A reset awaits the
 * connections it starts; when the Cluster disconnects meanwhile (its ready check failing while the
 * cluster is down, or a reconnect asked for), `stop()` drops them while they connect, and their
 * connect promises never settle (ioredis removes the listeners that would settle them). The reset
 * never ends, `isResetting` stays true, every later reset waits behind it, and the Cluster holds
 * no sharded subscriber again until the process restarts: every SSUBSCRIBE fails with "No sharded
 * subscriber for slot" (docs/operations.md, "Redis failover"). Seen after a master failover.
 *
 * The group's `stop()` leaves no connection of that reset to wait for, so here it also ends the
 * reset: the next one starts from the empty group as after a first connect.
 *
 * A Cluster that reconnects from scratch asks only its `startupNodes` (REDIS_CLUSTER_NODES) for the
 * slot map, not the nodes it has discovered since: once those few have failed, even with their
 * replicas serving, it never connects again. {@link seedFromDiscoveredNodes} adds the discovered ones.
 *
 * When Redis moves a slot to another master (resharding), it tells each subscriber of the slot's
 * channels with an unsolicited SUNSUBSCRIBE. ioredis expects none and reports it as an error of the
 * shard's subscriber ("Command queue state error … Last reply: sunsubscribe,…", as `nodeError`):
 * {@link slotMovedAway} recognises it. Nothing else tells that those channels are gone.
 *
 * After a reset the group says `subscribersReady` even when a subscriber it started failed (its
 * shard's master is still down): {@link shardedSubscribersUp} tells the two apart.
 *
 * This module is the only place that names those members and that message, checked by
 * test/integration/internals/ioredis.internals.test.ts.
 */
export const IOREDIS_CHECKED = { package: 'ioredis', versions: ['5.11.1'] } as const;

/** The ClusterSubscriberGroup members used here. */
interface SubscriberGroupInternals {
  isResetting: boolean;
  stop(): void;
}

let installed = false;

/**
 * Makes a stopped ClusterSubscriberGroup take the next reset (see the module comment); once per
 * process. False when ioredis no longer has the group where it had: nothing is changed then.
 */
export function releaseResetOnStop(): boolean {
  if (installed) return true;
  let group: { prototype: Partial<SubscriberGroupInternals> } | undefined;
  try {
    const load = createRequire(require.resolve('ioredis'));
    group = (load('./cluster/ClusterSubscriberGroup') as { default?: typeof group }).default;
  } catch {
    return false;
  }
  const proto = group?.prototype;
  if (typeof proto?.stop !== 'function') return false;
  const stop = proto.stop;
  proto.stop = function (this: SubscriberGroupInternals) {
    stop.call(this);
    this.isResetting = false;
  };
  installed = true;
  return true;
}

/** A node address as ioredis takes it. */
export interface NodeAddress {
  host: string;
  port: number;
}

/**
 * Keeps `cluster`'s startup nodes at `configured` plus every node of its latest slot map, so that a
 * reconnect from scratch finds the cluster while any node it knew of answers.
 */
export function seedFromDiscoveredNodes(cluster: Cluster, configured: readonly NodeAddress[]): void {
  const target = cluster as unknown as { startupNodes?: unknown };
  if (!Array.isArray(target.startupNodes)) return;
  const key = (n: NodeAddress) => `${n.host}:${n.port}`;
  cluster.on('refresh', () => {
    const known = new Set(configured.map(key));
    const seen: NodeAddress[] = [];
    for (const node of cluster.nodes('all')) {
      const { host, port } = node.options;
      if (host === undefined || port === undefined || known.has(key({ host, port }))) continue;
      known.add(key({ host, port }));
      seen.push({ host, port });
    }
    target.startupNodes = [...configured, ...seen];
  });
}

/** Whether `err`, a `nodeError` of a Cluster with sharded subscribers, is Redis unsubscribing it from a moved slot's channels. */
export function slotMovedAway(err: unknown): boolean {
  return err instanceof Error && /Last reply: sunsubscribe,/.test(err.message);
}

/**
 * Whether every sharded subscriber `cluster` holds is connected, connecting or not needed yet (none
 * failed or ended); true when ioredis no longer keeps them where it did.
 */
export function shardedSubscribersUp(cluster: Cluster): boolean {
  const group = (cluster as unknown as { shardedSubscribers?: { shardedSubscribers?: unknown } }).shardedSubscribers?.shardedSubscribers;
  if (!(group instanceof Map)) return true;
  for (const subscriber of group.values() as Iterable<{ isHealthy?: () => boolean }>) {
    if (typeof subscriber.isHealthy === 'function' && !subscriber.isHealthy()) return false;
  }
  return true;
}
