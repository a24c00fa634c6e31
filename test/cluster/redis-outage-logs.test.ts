import type { Socket } from 'socket.io-client';
import { isReady } from '../helpers/cluster';
import { waitFor } from '../helpers/wait';
import { startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// What an operator's log shows of a Redis outage: a steady trickle, not a line per socket. Clients
// that leave while Redis is away cannot be removed from presence (their entries expire after
// PRESENCE_TTL_S); a replica with thousands of clients wrote one error line for each of them.
let redis: TestRedis;
let hub: TestHub;
const lines: string[] = [];

beforeAll(async () => {
  redis = await startRedis();
  hub = await startHub({ REDIS_URL: redis.url, LOG_LEVEL: 'warn' }, { logLines: lines });
}, 30_000);

afterAll(async () => {
  await hub?.close();
  await redis?.close();
}, 30_000);

interface LogLine {
  level: number;
  msg: string;
  suppressed?: number;
}

it('40 clients leaving while Redis is down log one throttled warning, no error per client', async () => {
  const sockets: Socket[] = [];
  for (let i = 0; i < 40; i++) sockets.push(await hub.client('bot', { sub: `leaver-${i}` }));

  await redis.stop();
  await waitFor(async () => !(await isReady(hub.url)), 10_000, 'the hub unready');
  const before = lines.length;
  for (const socket of sockets) socket.disconnect();
  await waitFor(() => hub.hub.io.of('/ws/client').sockets.size === 0, 10_000, 'every client gone');
  // Each removal fails at once: commands are not queued while Redis is away.
  const presence = () =>
    lines
      .slice(before)
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => /client from presence/.test(line.msg));
  await waitFor(() => presence().length > 0, 10_000, 'the presence line');

  await redis.start();
  await waitFor(() => isReady(hub.url), 15_000, 'the hub ready again');
  const logged = presence();
  expect(logged.filter((line) => line.level >= 50)).toEqual([]);
  expect(logged.length).toBeLessThanOrEqual(2);
  expect(logged[0]).toMatchObject({ level: 40, msg: expect.stringContaining('PRESENCE_TTL_S') });
}, 60_000);
