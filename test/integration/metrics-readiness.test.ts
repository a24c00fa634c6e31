// The metrics the alerts are built on (helm/relay-hub/files/relay-hub.rules.yml): relay_ready and
// relay_readiness_check say what /health/ready says, at scrape time; relay_memory_limit_bytes is the
// limit RSS is measured against; the pub/sub canary's round trips are a histogram.
import { totalmem } from 'node:os';
import { startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { waitFor } from '../helpers/wait';

async function scrape(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

/** Polls `url`'s /health/ready until it answers `status` (the canary goes stale on its own clock). */
async function readyStatus(url: string, status: number, timeoutMs = 15_000): Promise<void> {
  await waitFor(async () => (await fetch(`${url}/health/ready`)).status === status, timeoutMs, `/health/ready to answer ${status}`, 200);
}

let redis: TestRedis;
let t: TestHub;
beforeAll(async () => {
  redis = await startRedis();
  t = await startHub({ REDIS_URL: redis.url });
});
afterAll(async () => {
  await t?.close();
  await redis?.close();
});

test('a ready replica: relay_ready 1, every check 1, the canary round trip observed, the memory limit known', async () => {
  await readyStatus(t.url, 200);
  const samples = await scrape(t.url);
  expect(samples.get('relay_ready')).toBe(1);
  expect(samples.get('relay_readiness_check{check="notDraining"}')).toBe(1);
  expect(samples.get('relay_readiness_check{check="redisPubSub"}')).toBe(1);
  // Ready means a probe came back, and each one that came back was timed.
  expect(samples.get('relay_redis_pubsub_roundtrip_seconds_count')).toBeGreaterThan(0);
  expect(samples.get('relay_redis_pubsub_roundtrip_seconds_sum')).toBeGreaterThan(0);
  const limit = samples.get('relay_memory_limit_bytes')!;
  expect(limit).toBeGreaterThan(0);
  expect(limit).toBeLessThanOrEqual(totalmem());
});

test('Redis gone: once /health/ready answers 503, relay_ready is 0 and relay_readiness_check names redisPubSub', async () => {
  await redis.stop();
  await readyStatus(t.url, 503);
  const samples = await scrape(t.url);
  expect(samples.get('relay_ready')).toBe(0);
  expect(samples.get('relay_readiness_check{check="redisPubSub"}')).toBe(0);
  expect(samples.get('relay_readiness_check{check="notDraining"}')).toBe(1);
  await redis.start();
  await readyStatus(t.url, 200);
  expect((await scrape(t.url)).get('relay_ready')).toBe(1);
});
