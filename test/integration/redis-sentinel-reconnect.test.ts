import { createConnection, createServer, type Server, type Socket } from 'node:net';
import Redis from 'ioredis';
import { createRedisConnections, quitConnection, whenReady, type RedisConnections } from '../../src/cluster/redis-connections';
import { startRedisSentinel, type TestSentinel } from '../helpers/redis-topologies';

// A Sentinel failover announced while a connection is between reconnect attempts' steps: ioredis
// has asked a Sentinel for the master, and its failover detector (still subscribed from the
// connection before) hears +switch-master and cancels that attempt. ioredis then ends the
// connection for good (status `end`, no more retries), so a replica would answer every message
// SERVER_UNAVAILABLE until restarted. The hub's connections must come back on their own.
jest.setTimeout(60_000);

/** A TCP proxy to one Sentinel that can hold what clients send while told to, to stretch out a master lookup. */
interface HoldingProxy {
  port: number;
  hold(): void;
  /** Resolves once something is held (a lookup is in flight). */
  heldRequest(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

async function holdingProxy(targetPort: number): Promise<HoldingProxy> {
  let holding = false;
  const held: (() => void)[] = [];
  const waiting: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = createConnection(targetPort, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        inbound.destroy();
        outbound.destroy();
      });
    }
    outbound.pipe(inbound);
    inbound.on('data', (chunk: Buffer) => {
      if (!holding) {
        outbound.write(chunk);
        return;
      }
      held.push(() => outbound.write(chunk));
      for (const notify of waiting.splice(0)) notify();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    hold: () => (holding = true),
    heldRequest: () => (held.length > 0 ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve))),
    release() {
      holding = false;
      for (const send of held.splice(0)) send();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let sentinel: TestSentinel;
let proxy: HoldingProxy;
let connections: RedisConnections;

beforeAll(async () => {
  sentinel = await startRedisSentinel('reconnectmaster');
  proxy = await holdingProxy(sentinel.sentinels[0].port);
  // The proxy is the only Sentinel configured, so a master lookup asks it first; the failover
  // detector also learns the other two and hears +switch-master from them directly.
  connections = createRedisConnections(
    { kind: 'sentinel', sentinels: [{ host: '127.0.0.1', port: proxy.port }], name: sentinel.name, auth: { tls: false } },
    'sentinel-reconnect-test',
  );
  // The hub reports these (redisErrorReporter); here the failed attempt's error is expected.
  for (const client of [connections.command, connections.subscriber]) client.on('error', () => {});
  expect(await whenReady(connections.command, 10_000)).toBe(true);
}, 60_000);

afterAll(async () => {
  await quitConnection(connections?.command);
  await quitConnection(connections?.subscriber);
  await proxy?.close();
  await sentinel?.close();
}, 30_000);

it('connects again when a failover cancels a reconnect attempt mid-lookup', async () => {
  const client = connections.command as Redis;
  await client.set('before', '1');
  const master = await sentinel.master();
  const admin = new Redis(master.port, '127.0.0.1');
  const sentinelAdmin = new Redis(sentinel.sentinels[1].port, '127.0.0.1');
  const switched = new Redis(sentinel.sentinels[1].port, '127.0.0.1');
  try {
    await switched.subscribe('+switch-master');
    const switchHeard = new Promise<void>((resolve) => switched.once('message', () => resolve()));

    // Drop the client's connection: it reconnects, and its master lookup is held at the proxy.
    proxy.hold();
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await proxy.heldRequest();

    // A failover while the lookup is out; ioredis's detector cancels the attempt (`connecting`
    // false) when it hears of it, which is the moment to let the lookup's reply through.
    await sentinelAdmin.call('SENTINEL', 'FAILOVER', sentinel.name);
    await switchHeard;
    const connector = (client as unknown as { connector: { connecting: boolean } }).connector;
    const deadline = Date.now() + 5000;
    while (connector.connecting && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    expect(connector.connecting).toBe(false);
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    proxy.release();

    // ioredis ends the connection (what the bug needs); it must not stay ended.
    await ended;
    expect(await whenReady(client, 15_000)).toBe(true);
    expect(await client.get('before')).toBe('1');
    await client.set('after', '2');
    const newMaster = await sentinel.master();
    expect(newMaster.port).not.toBe(master.port);
    const direct = new Redis(newMaster.port, '127.0.0.1');
    expect(await direct.get('after')).toBe('2');
    direct.disconnect();
  } finally {
    proxy.release();
    admin.disconnect();
    sentinelAdmin.disconnect();
    switched.disconnect();
  }
});
