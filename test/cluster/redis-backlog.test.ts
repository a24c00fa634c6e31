import type { Socket as NetSocket } from 'node:net';
import type { Socket } from 'socket.io-client';
import type { RelayAgent } from '../../src/sdk/agent';
import { waitFor } from '../helpers/wait';
import { startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { startSlowLink, type SlowLink } from '../helpers/slow-link';

// A replica whose Redis keeps answering but seconds behind: big messages on a busy machine queue up
// on the command connection (each command's reply comes after those of the commands before it) and
// in Redis's output to the subscriber (a probe of the pub/sub canary waits behind what was published
// before it). Found by the allocation bench (docs/benchmarks.md): 200 clients relaying 64 KiB
// messages over Redis; the command deadline failed commands whose replies were on their way
// (SERVER_UNAVAILABLE acks) and the canary took its late probes for lost ones and ended every client
// session. Here a link of 1 MiB/s between the hub and a real Redis makes the same queues.
jest.setTimeout(90_000);

const CLIENTS = 32;
const TEXT_BYTES = 60_000;
const LINK_BYTES_PER_S = 1024 * 1024;

let redis: TestRedis;
let link: SlowLink;
let t: TestHub;

beforeAll(async () => {
  redis = await startRedis();
  link = await startSlowLink(redis.port, LINK_BYTES_PER_S);
  t = await startHub({
    REDIS_URL: link.url,
    // One bot gets every message and sends every reply at once: its budgets out of the way.
    AGENT_DELIVERY_RATE_PER_S: '100000000',
    AGENT_DELIVERY_RATE_BURST: '100000000',
    AGENT_MESSAGE_RATE_PER_S: '100000',
    AGENT_MESSAGE_RATE_BURST: '100000',
    AGENT_ACK_TIMEOUT_MS: '60000',
  });
}, 30_000);

afterAll(async () => {
  await t?.close();
  await link?.close();
  await redis?.close();
});

async function redisErrors(): Promise<string[]> {
  const text = await t.hub.metrics.registry.getSingleMetricAsString('relay_redis_errors_total');
  return text.split('\n').filter((line) => !line.startsWith('#') && !/ 0$/.test(line) && line.trim() !== '');
}

it('relays big messages while its Redis answers seconds behind: every message acked ok and its reply delivered, no session ended', async () => {
  const runtime: RelayAgent = await t.agent('big-bot');
  runtime.onMessage((m) => void runtime.reply(m.from, `echo ${m.text}`, undefined, m.id));
  const clients: Socket[] = [];
  for (let i = 0; i < CLIENTS; i++) clients.push(await t.client('big-bot', { sub: `big-user-${i}` }));
  const closed: string[] = [];
  const replies = clients.map(() => [] as string[]);
  clients.forEach((socket, i) => {
    socket.on('session:closed', (info: { code: string }) => closed.push(info.code));
    socket.on('message', (m: { text: string }) => replies[i].push(m.text));
  });
  const texts = clients.map((_, i) => `${i} ${'x'.repeat(TEXT_BYTES)}`);

  const started = performance.now();
  const acks = await Promise.all(
    clients.map((socket, i) =>
      socket
        .timeout(60_000)
        .emitWithAck('message', { clientMessageId: `big-${i}`, text: texts[i] })
        .then(
          (ack: { ok: boolean; error?: { code: string } }) => (ack.ok ? 'ok' : ack.error!.code),
          () => 'no ack',
        ),
    ),
  );
  const ackedMs = performance.now() - started;
  const delivered = () => clients.filter((_, i) => replies[i].includes(`echo ${texts[i]}`)).length;
  // Until every reply is in, or a socket is gone (the hub ended its session), which fails below.
  await waitFor(() => delivered() === CLIENTS || clients.some((s) => !s.connected), 60_000, 'every reply').catch(() => {});

  expect({ acks: acks.filter((a) => a !== 'ok'), closed, redisErrors: await redisErrors() }).toEqual({
    acks: [],
    closed: [],
    redisErrors: [],
  });
  expect(delivered()).toBe(CLIENTS);
  // The queues were long enough to have tripped the old deadline (2 s from a command's send).
  expect(ackedMs).toBeGreaterThan(2000);
});

it('still ends the sessions of a replica whose subscriber reads nothing at all while Redis takes its probes', async () => {
  const client = await t.client('big-bot', { sub: 'stalled-user' });
  const ended = new Promise<string>((resolve) => client.once('disconnect', resolve));
  // The subscriber stops reading (a frozen connection): the probes Redis took never come back and
  // nothing else arrives either. That is a loss, not a backlog.
  const subscriber = (t.hub.relay.namespaces.client.adapter as unknown as { subClient: { stream: NetSocket } }).subClient;
  const stream = subscriber.stream;
  stream.pause();
  const pausedAt = performance.now();
  try {
    // The hub ends the session: the client sees its transport closed by the hub.
    expect(await ended).toBe('transport close');
    // Three missed rounds of the canary, one a second.
    expect(performance.now() - pausedAt).toBeLessThan(10_000);
    expect((await redisErrors()).join('\n')).toMatch(/relay_redis_errors_total\{component="canary"\} [1-9]/);
  } finally {
    stream.resume();
  }
});
