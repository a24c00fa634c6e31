import { createServer, type Server } from 'node:net';
import Redis from 'ioredis';
import { freePort, startRedis } from '../../helpers/redis-server';
import { startListening } from '../../helpers/redis-topologies';

// The Sentinel and Cluster tests start many redis-servers on ports found free a moment before; a
// port another process of the suite takes in between must not leave a test waiting on a server
// that exited at start.
describe('startListening', () => {
  let taken: Server;
  afterEach(() => taken?.close());

  it('starts the server again on another port when the one it was given is taken by the time it binds', async () => {
    const busy = await freePort();
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(busy, '127.0.0.1', resolve));
    const ports = [busy];
    const server = await startListening(
      async () => ports.shift() ?? freePort(),
      (port) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      'redis',
    );
    try {
      expect(server.port).not.toBe(busy);
      expect(server.alive()).toBe(true);
    } finally {
      await server.kill();
    }
  });

  it('startRedis does the same for the servers of single-server tests', async () => {
    const busy = await freePort();
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(busy, '127.0.0.1', resolve));
    const ports = [busy];
    const redis = await startRedis({ pick: async () => ports.shift() ?? freePort() });
    try {
      expect(redis.port).not.toBe(busy);
      const client = new Redis(redis.url);
      expect(await client.ping()).toBe('PONG');
      client.disconnect();
    } finally {
      await redis.close();
    }
  });
});
