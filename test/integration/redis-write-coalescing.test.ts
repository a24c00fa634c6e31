import type { Socket } from 'node:net';
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { createRedisConnections, quitConnection, whenReady, type RedisConnections } from '../../src/cluster/redis-connections';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-topologies';

// The command connection sends what a replica issues within one turn of the event loop in one
// socket write (redis-connections.ts, coalesceWrites): counted at the socket, on one server, after
// a reconnect, and per node of a Cluster. Replies stay matched to their commands.
jest.setTimeout(60_000);

/** Counts the socket's writes to the kernel (one `_write` or `_writev` call each). */
function countWrites(socket: Socket): { readonly count: number } {
  const counter = { count: 0 };
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method] as (...args: unknown[]) => void;
    socket[method] = function (this: Socket, ...args: unknown[]) {
      counter.count++;
      return original.apply(this, args);
    } as never;
  }
  return counter;
}

function streamOf(redis: Redis): Socket {
  return redis.stream;
}

describe('one server', () => {
  let redis: TestRedis;
  let connections: RedisConnections;

  beforeAll(async () => {
    redis = await startRedis();
    connections = createRedisConnections({ kind: 'single', url: redis.url }, 'coalescing-test');
    expect(await whenReady(connections.command, 5000)).toBe(true);
  });

  afterAll(async () => {
    await quitConnection(connections.command);
    await quitConnection(connections.subscriber);
    await redis.close();
  });

  it('writes the commands of one turn once, each answered with its own reply', async () => {
    const client = connections.command as Redis;
    const writes = countWrites(streamOf(client));
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => client.set(`k${i}`, `v${i}`).then(() => client.get(`k${i}`))));
    expect(replies).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`));
    // 20 SETs in the first turn, then 20 GETs issued as their replies arrive (one or a few turns).
    expect(writes.count).toBeGreaterThanOrEqual(2);
    expect(writes.count).toBeLessThanOrEqual(4);
  });

  it('gathers commands issued from separate callbacks of one turn', async () => {
    const client = connections.command as Redis;
    const writes = countWrites(streamOf(client));
    // Timers due at the same time run in one timers phase: separate callbacks, one turn.
    const sent = await new Promise<Promise<unknown>[]>((resolve) => {
      const pending: Promise<unknown>[] = [];
      for (let i = 0; i < 10; i++) setTimeout(() => pending.push(client.incr('counter')), 0);
      setTimeout(() => resolve(pending), 0);
    });
    expect((await Promise.all(sent)).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(writes.count).toBe(1);
  });

  it('coalesces on the socket of a reconnect too', async () => {
    const client = connections.command as Redis;
    const old = streamOf(client);
    const ready = new Promise((resolve) => client.once('ready', resolve));
    client.disconnect(true);
    await ready;
    expect(streamOf(client)).not.toBe(old);
    const writes = countWrites(streamOf(client));
    await Promise.all(Array.from({ length: 10 }, (_, i) => client.set(`r${i}`, 'x')));
    expect(writes.count).toBe(1);
  });
});

describe('Redis Cluster', () => {
  let cluster: TestRedisCluster;
  let connections: RedisConnections;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    const nodes = cluster.nodes.slice(0, 3).map((n) => ({ host: '127.0.0.1', port: n.port }));
    connections = createRedisConnections({ kind: 'cluster', nodes, auth: { tls: false } }, 'coalescing-test');
    expect(await whenReady(connections.command, 10_000)).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await quitConnection(connections.command);
    await quitConnection(connections.subscriber);
    await cluster?.close();
  });

  it('writes the commands of one turn once per master', async () => {
    const client = connections.command as Cluster;
    // A first round opens the connection to every master.
    await Promise.all(Array.from({ length: 30 }, (_, i) => client.set(`warm${i}`, '1')));
    const masters = client.nodes('master');
    expect(masters).toHaveLength(3);
    const writes = masters.map((node) => countWrites(streamOf(node)));
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => client.incr(`key${i}`)));
    expect(replies).toEqual(Array.from({ length: 30 }, () => 1));
    expect(writes.map((w) => w.count)).toEqual([1, 1, 1]);
  });
});
