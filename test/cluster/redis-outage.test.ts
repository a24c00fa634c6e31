import type { Socket } from 'socket.io-client';
import { isReady, reconnectAfterSessionsEnd, startTestCluster, startTraffic, type TestCluster } from '../helpers/cluster';
import { sleep, waitFor } from '../helpers/wait';

// Redis disappears (SIGKILL) for 5 s while clients on every replica keep sending to an agent.
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.close();
}, 30_000);

it('survives a 5 s Redis outage during traffic: unready while down, ready within 5 s after, full service after', async () => {
  const { replicas } = cluster.handle;
  const [A, B, C] = replicas.map((r) => r.url);
  const agent = await cluster.agent(A, 'bot');
  const received = new Set<string>();
  agent.onMessage((m) => void received.add(m.id));
  const sockets: Socket[] = await Promise.all([A, B, C].map((url, i) => cluster.socket(url, 'bot', { sub: `u${i}` })));
  const traffic = startTraffic(sockets, 100);
  await waitFor(() => traffic.outcomes.length >= 15, 5000, 'traffic before the outage');
  const reconnected = reconnectAfterSessionsEnd(sockets);

  await cluster.handle.redis.kill('SIGKILL');
  const downAt = Date.now();
  await waitFor(
    async () => (await Promise.all(replicas.map((r) => isReady(r.url)))).every((ready) => !ready),
    5000,
    'every replica unready',
  );
  await sleep(Math.max(0, 5000 - (Date.now() - downAt))); // the outage itself
  await cluster.handle.redis.start();
  const upAt = Date.now();
  await waitFor(async () => (await Promise.all(replicas.map((r) => isReady(r.url)))).every(Boolean), 5000, 'every replica ready again');
  const recoveredAt = Date.now();
  const outcomes = await traffic.stop();

  expect(replicas.every((r) => r.running)).toBe(true);
  expect(recoveredAt - upAt).toBeLessThan(5000);
  // Every message got an answer; what could not be delivered got an error ack, not silence.
  expect(outcomes.filter((o) => o.ack === 'no-ack')).toEqual([]);
  const failed = outcomes.filter((o) => o.ack !== 'no-ack' && !o.ack.ok);
  expect(failed.length).toBeGreaterThan(0);
  for (const o of failed)
    expect(['SERVER_UNAVAILABLE', 'TIMEOUT', 'AGENT_OFFLINE']).toContain((o.ack as { error: { code: string } }).error.code);
  for (const o of outcomes) if (o.ack !== 'no-ack' && o.ack.ok) expect(received.has(o.ack.id)).toBe(true);

  // Each replica ended its sessions once its subscriptions were back, and no sooner: during the
  // outage they got error acks, not silence. Then they reconnect and everything is delivered.
  expect(await reconnected).toEqual(['SERVER_UNAVAILABLE', 'SERVER_UNAVAILABLE', 'SERVER_UNAVAILABLE']);
  const after = startTraffic(sockets, 50);
  await waitFor(() => after.outcomes.length >= 60, 10_000, 'traffic after recovery');
  const afterOutcomes = await after.stop();
  expect(afterOutcomes.filter((o) => o.ack === 'no-ack' || !o.ack.ok)).toEqual([]);
  for (const o of afterOutcomes) expect(received.has((o.ack as { id: string }).id)).toBe(true);
}, 60_000);
