import type { Socket } from 'node:net';
import Redis, { type Cluster } from 'ioredis';
import { createRedisConnections, quitConnection, whenReady, type RedisConnections } from '../../src/cluster/redis-connections';
import { turnHold } from '../../src/net/cork-per-turn';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-topologies';
import { startSlowLink } from '../helpers/slow-link';
import { countWrites } from '../helpers/socket-writes';
import { sleep } from '../helpers/wait';

// The command connection of a replica (redis-connections.ts), on one server and on each node of a
// Cluster:
// - it sends what the replica issues within one turn of the event loop in one socket write
//   (coalesceWrites): counted at the socket, after a reconnect too, replies matched to commands;
// - a Redis that keeps the connection open and stops answering (here CLIENT PAUSE) does not keep
//   callers waiting: each command fails 2 s after it was sent (failLateCommands), and the
//   connection serves again once Redis answers; but none fails while Redis answers the commands
//   queued before it (a long queue is not a silent Redis).
jest.setTimeout(60_000);

// Turns held whole however long they run (net/cork-per-turn.ts writes out a long turn's first part
// early; websocket-batching.test.ts tests that), so that a loaded machine cannot split these.
const usualHold = turnHold.maxMs;
beforeAll(() => {
  turnHold.maxMs = Number.POSITIVE_INFINITY;
});
afterAll(() => {
  turnHold.maxMs = usualHold;
});

const PAUSE_MS = 4000;

/** How a command ended: its reply or error message, and the ms from its send to then. */
function timed(run: () => Promise<unknown>): Promise<{ outcome: string; ms: number }> {
  const sent = performance.now();
  const ms = () => performance.now() - sent;
  return run().then(
    (reply) => ({ outcome: `reply ${String(reply)}`, ms: ms() }),
    (err: Error) => ({ outcome: err.message, ms: ms() }),
  );
}

/** Sends `run` after `ms` (to stagger commands in time; nothing waits on this as a signal). */
function later<T>(ms: number, run: () => Promise<T>): Promise<T> {
  return sleep(ms).then(run);
}

function streamOf(redis: Redis): Socket {
  return redis.stream;
}

describe('one server', () => {
  let redis: TestRedis;
  let connections: RedisConnections;
  let admin: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    connections = createRedisConnections({ kind: 'single', url: redis.url }, 'command-connection-test');
    admin = new Redis(redis.url);
    expect(await whenReady(connections.command, 5000)).toBe(true);
  });

  afterAll(async () => {
    await quitConnection(connections.command);
    await quitConnection(connections.subscriber);
    admin.disconnect();
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
    // Immediates queued together run in one check phase, microtasks between them; the uncork
    // they queue waits for the next turn's. (Not timers: Node stamps each setTimeout with a fresh
    // clock reading, so ten of them can fall due in two turns.)
    const sent = await new Promise<Promise<unknown>[]>((resolve) => {
      const pending: Promise<unknown>[] = [];
      for (let i = 0; i < 10; i++) setImmediate(() => pending.push(client.incr('counter')));
      setImmediate(() => resolve(pending));
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

  it('in a turn that runs long, writes out what it held once the oldest of it has waited the hold', async () => {
    const client = connections.command as Redis;
    const writes = countWrites(streamOf(client));
    turnHold.maxMs = 2;
    try {
      // Five commands 3 ms apart in one turn: every second one finds the oldest held past 2 ms and
      // goes out with it (1-2, 3-4, 5 at the turn's end), where a turn held whole is one write.
      const sent: Promise<unknown>[] = [];
      for (let i = 0; i < 5; i++) {
        sent.push(client.incr('long-turn'));
        const until = performance.now() + 3;
        while (performance.now() < until);
      }
      expect(await Promise.all(sent)).toEqual([1, 2, 3, 4, 5]);
      expect(writes.count).toBe(3);
    } finally {
      turnHold.maxMs = Number.POSITIVE_INFINITY;
    }
  });

  it('fails each unanswered command 2 s after its own send, then serves again', async () => {
    const client = connections.command as Redis;
    await client.set('k', 'v');
    expect(await admin.client('PAUSE', PAUSE_MS, 'ALL')).toBe('OK');
    const [first, second] = await Promise.all([timed(() => client.get('k')), later(700, () => timed(() => client.get('k')))]);
    expect(first.outcome).toBe('Command timed out');
    expect(second.outcome).toBe('Command timed out');
    for (const { ms } of [first, second]) {
      expect(ms).toBeGreaterThanOrEqual(2000);
      expect(ms).toBeLessThan(PAUSE_MS - 700);
    }
    // The pause is over when the admin connection, paused too, gets its answer. The command
    // connection was kept, and replies stay matched to their commands.
    expect(await admin.ping()).toBe('PONG');
    expect(await client.get('k')).toBe('v');
    expect(await client.incr('n')).toBe(1);
  });

  it('fails a command in flight when its connection closes, at once, and serves again after the reconnect', async () => {
    const client = connections.command as Redis;
    await client.set('lost', 'before');
    const name = (await client.client('GETNAME')) as string;
    // The write waits in Redis (paused) when its connection is killed: no reply will ever come.
    expect(await admin.client('PAUSE', PAUSE_MS, 'WRITE')).toBe('OK');
    const reconnected = new Promise((resolve) => client.once('ready', resolve));
    const pending = timed(() => client.set('lost', 'in flight'));
    await new Promise((resolve) => setImmediate(resolve));
    const line = ((await admin.client('LIST')) as string).split('\n').find((l) => l.includes(` name=${name} `))!;
    expect(await admin.client('KILL', /addr=(\S+)/.exec(line)![1])).toBe('OK');
    const never = new Promise<{ outcome: string; ms: number }>((resolve) =>
      setTimeout(() => resolve({ outcome: 'no answer in 5 s', ms: 5000 }), 5000),
    );
    const { outcome, ms } = await Promise.race([pending, never]);
    expect(outcome).toBe('Connection is closed.');
    expect(ms).toBeLessThan(1000);
    await admin.client('UNPAUSE');
    await reconnected;
    // Killed while paused: Redis never ran it.
    expect(await client.get('lost')).toBe('before');
  });

  it('fails no command while Redis keeps answering the ones queued before it, however long the queue takes', async () => {
    // Through a link of 1 MiB/s, twelve SETs of 256 KiB sent at once reach Redis one after another
    // over three seconds, well past the 2 s of a command's deadline; each is answered as it arrives.
    const link = await startSlowLink(redis.port, 1024 * 1024);
    const slow = createRedisConnections({ kind: 'single', url: link.url }, 'command-connection-test-slow');
    try {
      expect(await whenReady(slow.command, 5000)).toBe(true);
      const value = 'v'.repeat(256 * 1024);
      const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => timed(() => slow.command.set(`big${i}`, value))));
      expect(replies.map((r) => r.outcome)).toEqual(Array.from({ length: 12 }, () => 'reply OK'));
      expect(Math.max(...replies.map((r) => r.ms))).toBeGreaterThan(2500);
    } finally {
      await quitConnection(slow.command);
      await quitConnection(slow.subscriber);
      await link.close();
    }
  });

  it('leaves commands that get their reply in time alone', async () => {
    const client = connections.command as Redis;
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) => client.set(`s${i}`, String(i)).then(() => client.get(`s${i}`))),
    );
    expect(replies).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
  });
});

describe('Redis Cluster', () => {
  let cluster: TestRedisCluster;
  let connections: RedisConnections;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    const nodes = cluster.nodes.slice(0, 3).map((n) => ({ host: '127.0.0.1', port: n.port }));
    connections = createRedisConnections({ kind: 'cluster', nodes, auth: { tls: false } }, 'command-connection-test');
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

  it('fails unanswered commands on the node that stopped answering, not on the others', async () => {
    const client = connections.command as Cluster;
    // Two keys on different masters: {a} and {b} hash to different slots of a 3-master cluster.
    await Promise.all([client.set('{a}k', '1'), client.set('{b}k', '2')]);
    const [nodeA, nodeB] = [await nodeOf(client, '{a}k'), await nodeOf(client, '{b}k')];
    expect(nodeA).not.toBe(nodeB);
    const admin = new Redis(nodeA);
    try {
      expect(await admin.client('PAUSE', PAUSE_MS, 'ALL')).toBe('OK');
      const [a, b] = await Promise.all([timed(() => client.get('{a}k')), timed(() => client.get('{b}k'))]);
      expect(a.outcome).toBe('Command timed out');
      expect(a.ms).toBeGreaterThanOrEqual(2000);
      expect(a.ms).toBeLessThan(PAUSE_MS);
      expect(b.outcome).toBe('reply 2');
      expect(await admin.ping()).toBe('PONG');
      expect(await client.get('{a}k')).toBe('1');
    } finally {
      admin.disconnect();
    }
  });
});

/** The `host:port` of the master that holds `key`. */
async function nodeOf(client: Cluster, key: string): Promise<string> {
  const slot = Number(await client.cluster('KEYSLOT', key));
  const range = (await client.cluster('SLOTS')).find(([from, to]) => slot >= from && slot <= to)!;
  const [host, port] = range[2];
  return `redis://${host}:${port}`;
}
