import { Cluster } from 'ioredis';
import { releaseResetOnStop, seedFromDiscoveredNodes, shardedSubscribersUp } from '../../../src/internals/ioredis.internals';
import { startRedisCluster, type TestRedisCluster } from '../../helpers/redis-topologies';
import { sleep, waitFor } from '../../helpers/wait';

// src/internals/ioredis.internals.ts works around two things of ioredis's Cluster on a real 3-master
// Redis Cluster: a ClusterSubscriberGroup stopped while a reset waits for the subscribers it started
// stays resetting for good (then no SSUBSCRIBE works again), and a reconnect from scratch asks only
// the startup nodes.

/** The ClusterSubscriberGroup of a Cluster with sharded subscribers, as the module reads it. */
interface Group {
  isResetting: boolean;
  reset(slots: unknown, nodes: unknown): Promise<void>;
  stop(): void;
}

let cluster: TestRedisCluster;
const clients: Cluster[] = [];

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await cluster?.close();
});

async function connect(seeds = cluster.nodes.slice(0, 3)): Promise<Cluster> {
  const client = new Cluster(
    seeds.map((n) => ({ host: '127.0.0.1', port: n.port })),
    { shardedSubscribers: true, redisOptions: { maxRetriesPerRequest: 1 } },
  );
  client.on('error', () => {});
  clients.push(client);
  await waitFor(() => client.status === 'ready', 10_000, 'cluster ready');
  return client;
}

/** Stops the group while a reset waits for the subscribers it has just started (as a Cluster disconnect does). */
async function stopDuringReset(client: Cluster): Promise<Group> {
  const group = (client as unknown as { shardedSubscribers: Group }).shardedSubscribers;
  const slots = (client as unknown as { slots: unknown }).slots;
  group.stop();
  void group.reset(slots, client.nodes('all'));
  expect(group.isResetting).toBe(true);
  // Once the subscribers' sockets exist (ioredis opens them on the next tick) and before they connect.
  await new Promise<void>((resolve) => process.nextTick(resolve));
  group.stop();
  // Whatever the stopped subscribers were doing has settled by now.
  await sleep(500);
  return group;
}

it('without the workaround, a group stopped during a reset stays resetting: every later reset waits forever', async () => {
  const client = await connect();
  await client.ssubscribe('internals-wedge');
  const group = await stopDuringReset(client);
  // If this fails, ioredis settles the stopped subscribers' starts now: the workaround can go.
  expect(group.isResetting).toBe(true);
});

it('with it, the next reset runs and sharded subscriptions work again', async () => {
  expect(releaseResetOnStop()).toBe(true);
  const client = await connect();
  await client.ssubscribe('internals-wedge');
  const group = await stopDuringReset(client);
  expect(group.isResetting).toBe(false);
  await group.reset((client as unknown as { slots: unknown }).slots, client.nodes('all'));
  const got = new Promise<string>((resolve) => client.once('smessage', (_channel: string, message: string) => resolve(message)));
  await client.ssubscribe('internals-check');
  const publisher = await connect();
  await publisher.spublish('internals-check', 'hello');
  expect(await got).toBe('hello');
  // The subscribers shardedSubscribersUp reads are where it reads them, and up.
  const subscribers = (group as unknown as { shardedSubscribers: Map<string, { isHealthy(): boolean }> }).shardedSubscribers;
  expect([...subscribers.values()].map((s) => s.isHealthy())).toContain(true);
  expect(shardedSubscribersUp(client)).toBe(true);
  // One whose master is gone is not.
  const [first] = subscribers.values() as Iterable<{ stop(): void }>;
  first.stop();
  expect(shardedSubscribersUp(client)).toBe(false);
});

it('a Cluster seeded from one node keeps the masters it discovered as startup nodes', async () => {
  const seed = cluster.nodes[0];
  const client = new Cluster([{ host: '127.0.0.1', port: seed.port }], { redisOptions: { maxRetriesPerRequest: 1 } });
  client.on('error', () => {});
  clients.push(client);
  seedFromDiscoveredNodes(client, [{ host: '127.0.0.1', port: seed.port }]);
  await waitFor(() => client.status === 'ready', 10_000, 'cluster ready');
  const startupNodes = () => (client as unknown as { startupNodes: { port: number }[] }).startupNodes.map((n) => n.port);
  const masters = [...new Set(await Promise.all([0, 8191, 16383].map(async (slot) => (await cluster.masterOf(slot)).port)))];
  await waitFor(() => masters.every((port) => startupNodes().includes(port)), 10_000, 'every master a startup node');
  expect(startupNodes()[0]).toBe(seed.port);
});
