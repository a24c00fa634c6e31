import type { Socket } from 'socket.io-client';
import { isReady, reconnectAfterSessionsEnd, rssBytes, startTestCluster, startTraffic, type TestCluster } from '../helpers/cluster';
import { waitFor } from '../helpers/wait';

// Redis gone for 60 s under steady traffic: replicas stay up with bounded memory and recover fully.
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.close();
}, 30_000);

const MB = 1024 * 1024;

it('survives a 60 s Redis outage with bounded memory and full service after', async () => {
  const { replicas } = cluster.handle;
  const [A, B, C] = replicas.map((r) => r.url);
  const agent = await cluster.agent(A, 'bot');
  const received = new Set<string>();
  agent.onMessage(async (m) => {
    received.add(m.id);
    await agent.reply(m.from, 'ok').catch(() => {});
  });
  const sockets: Socket[] = await Promise.all([A, B, C].map((url, i) => cluster.socket(url, 'bot', { sub: `u${i}` })));
  const traffic = startTraffic(sockets, 50);
  await waitFor(() => traffic.outcomes.length >= 30, 5000, 'traffic before the outage');
  const baseline = replicas.map((r) => rssBytes(r.pid!));
  const reconnected = reconnectAfterSessionsEnd(sockets);

  await cluster.handle.redis.kill('SIGKILL');
  const downAt = Date.now();
  const peak = [...baseline];
  await waitFor(
    () => {
      replicas.forEach((r, i) => (peak[i] = Math.max(peak[i], rssBytes(r.pid!))));
      return Date.now() - downAt >= 60_000;
    },
    65_000,
    'the outage to last 60 s',
  );
  expect(replicas.every((r) => r.running)).toBe(true);
  await cluster.handle.redis.start();
  await waitFor(async () => (await Promise.all(replicas.map((r) => isReady(r.url)))).every(Boolean), 5000, 'every replica ready again');
  const outcomes = await traffic.stop();

  // ~3,600 messages were refused during the outage; memory grew by no more than a small constant.
  expect(outcomes.filter((o) => o.ack === 'no-ack')).toEqual([]);
  replicas.forEach((_, i) => expect(peak[i] - baseline[i]).toBeLessThan(40 * MB));
  const logLines = replicas.map((r) => r.logs().length);
  for (const lines of logLines) expect(lines).toBeLessThan(200); // throttled, not one line per failure

  expect(await reconnected).toEqual(['SERVER_UNAVAILABLE', 'SERVER_UNAVAILABLE', 'SERVER_UNAVAILABLE']);
  const after = startTraffic(sockets, 50);
  await waitFor(() => after.outcomes.length >= 60, 10_000, 'traffic after recovery');
  const afterOutcomes = await after.stop();
  expect(afterOutcomes.filter((o) => o.ack === 'no-ack' || !o.ack.ok)).toEqual([]);
  for (const o of afterOutcomes) expect(received.has((o.ack as { id: string }).id)).toBe(true);
  console.log(
    `60 s outage: ${outcomes.length} sends, RSS baseline ${baseline.map((b) => (b / MB).toFixed(0))} MB, ` +
      `peak ${peak.map((p) => (p / MB).toFixed(0))} MB, log lines ${logLines}`,
  );
}, 120_000);
