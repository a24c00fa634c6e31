// The memory high-water mark (MEMORY_HIGH_WATER_RATIO, docs/operations.md "Memory high-water mark"):
// a replica past it turns unready and refuses new handshakes with SERVER_BUSY (retryable) while
// keeping its sessions, and comes back below MEMORY_LOW_WATER_RATIO. Real memory, not a stub: the
// hub runs in this process with MEMORY_LIMIT_BYTES (measured against this process's RSS) set a little
// above what the process holds, and the test fills buffers in this process to cross the mark.
import { once } from 'node:events';
import type { SendAck } from '../../src/protocol';
import { agentSocket, clientSocket, refusal, startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';
import { exposedGc } from '../helpers/gc';

const gc = exposedGc();

const HIGH = 0.85;
const LOW = 0.75;
// Chunks above glibc's largest mmap threshold (32 MiB), so freeing one gives its pages back at once.
const CHUNK = 48 * 2 ** 20;

async function scrape(url: string): Promise<Map<string, number>> {
  const samples = new Map<string, number>();
  for (const line of (await (await fetch(`${url}/metrics`)).text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

async function ready(url: string): Promise<{ status: number; checks: Record<string, boolean> }> {
  const res = await fetch(`${url}/health/ready`);
  return { status: res.status, checks: ((await res.json()) as { checks: Record<string, boolean> }).checks };
}

let t: TestHub;
let limit: number;
beforeAll(async () => {
  gc();
  // The process at 60 % of the limit: past the high-water mark takes some 25 % of the limit more.
  limit = Math.round(process.memoryUsage.rss() / 0.6);
  t = await startHub({
    MEMORY_LIMIT_BYTES: String(limit),
    MEMORY_HIGH_WATER_RATIO: String(HIGH),
    MEMORY_LOW_WATER_RATIO: String(LOW),
  });
});
afterAll(() => t.close());

test('past the high-water mark: unready, new handshakes refused with SERVER_BUSY, sessions kept; ready again below the low mark', async () => {
  const { hub } = t;
  expect(hub.memory.source).toBe('setting');
  expect(hub.memory.overHighWater).toBe(false);
  expect(await ready(t.url)).toMatchObject({ status: 200, checks: { memoryBelowHighWater: true } });
  const agent = await t.agent('bot');
  const received: string[] = [];
  agent.onMessage((m) => void received.push(m.text));
  const kept = await t.client('bot', { sub: 'kept' });

  // Fill real memory until the process is past the mark, with a margin for a GC shrinking the heap.
  const held: Buffer[] = [];
  const over = once(hub.memory, 'change');
  while (process.memoryUsage.rss() < (HIGH + 0.05) * limit) held.push(Buffer.alloc(CHUNK, 1));
  expect(await over).toEqual([true]);

  expect(await ready(t.url)).toEqual({ status: 503, checks: expect.objectContaining({ memoryBelowHighWater: false, notDraining: true }) });
  const samples = await scrape(t.url);
  expect(samples.get('relay_memory_limit_bytes')).toBe(limit);
  expect(samples.get('relay_memory_headroom_bytes')).toBeLessThan((1 - HIGH) * limit);
  expect(samples.get('relay_readiness_check{check="memoryBelowHighWater"}')).toBe(0);
  expect(samples.get('relay_ready')).toBe(0);
  // New sessions of either namespace are refused, retryably, so the peer tries another replica.
  const token = mintToken({ sub: 'newcomer' });
  expect(await refusal(clientSocket(t.url, { token, agentId: 'bot' }))).toEqual({ code: 'SERVER_BUSY', retryable: true });
  expect(await refusal(agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'bot' }))).toEqual({ code: 'SERVER_BUSY', retryable: true });
  const refused = (await scrape(t.url)).get('relay_handshakes_total{namespace="/ws/client",result="rejected",code="SERVER_BUSY"}');
  expect(refused).toBe(1);
  // The sessions it holds go on: the kept client's message reaches the bot, acked.
  const ack = (await kept.timeout(5000).emitWithAck('message', { clientMessageId: 'kept-1', text: 'still here' })) as SendAck;
  expect(ack).toMatchObject({ ok: true });
  expect(kept.connected).toBe(true);

  // Let the memory go: below the low mark the replica is ready and takes handshakes again.
  const back = once(hub.memory, 'change');
  held.length = 0;
  gc();
  expect(await back).toEqual([false]);
  expect(process.memoryUsage.rss()).toBeLessThan(LOW * limit);
  expect(await ready(t.url)).toMatchObject({ status: 200, checks: { memoryBelowHighWater: true } });
  await t.client('bot', { sub: 'newcomer' });
  expect(received).toContain('still here');
});
