import type { Socket as NetSocket } from 'node:net';
import type { Socket } from 'socket.io-client';
import type { RelayAgent } from '../../src/sdk/agent';
import { collect, reconnectAfterSessionsEnd } from '../helpers/cluster';
import { waitFor } from '../helpers/wait';
import { startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';

// A replica whose event loop is slow (blocked for seconds, or starved of CPU) must not mistake its
// own slowness for Redis's. Found by the 50,000-client scale bench (docs/benchmarks.md): on a
// starved replica, commands whose replies had already arrived failed at the 2 s command deadline
// ("Command timed out": the deadline's timer ran before the poll phase read them), the pub/sub
// canary counted the probes it had not had the CPU to read as lost, and the replica declared a
// subscription gap and ended every client session at once: a reconnect storm on top of the load.
// Here the hub's event loop is blocked on several turns in a row while clients send messages: for
// 2.5 s a turn (longer than the 2 s command deadline and than two canary intervals), and for 1.2 s
// a turn (a starved process: a little longer than the canary's 1 s interval, every round late).
let redis: TestRedis;
let hub: TestHub;
let agent: RelayAgent;
const lines: string[] = [];

beforeAll(async () => {
  redis = await startRedis();
  hub = await startHub({ REDIS_URL: redis.url, LOG_LEVEL: 'warn' }, { logLines: lines });
  agent = await hub.agent('bot');
  agent.onMessage((m) => void agent.reply(m.from, `echo:${m.text}`, undefined, m.id));
}, 30_000);

afterAll(async () => {
  await hub?.close();
  await redis?.close();
}, 30_000);

/** Keeps the thread busy for `ms`, as a long synchronous turn or a starved process does. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

async function redisErrors(): Promise<Record<string, number>> {
  const { values } = await hub.hub.metrics.redisErrors.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.component), v.value]));
}

type Ack = { ok: true; id: string } | { ok: false; error: { code: string } };

/** Sends a message; its ack, or the client's error (no ack, disconnected) as an error code. */
function send(socket: Socket, text: string): Promise<Ack> {
  return (socket.timeout(30_000).emitWithAck('message', { clientMessageId: text, text }) as Promise<Ack>).catch((err: Error) => ({
    ok: false,
    error: { code: err.message },
  }));
}

it.each([
  { blockMs: 2500, turns: 5 },
  { blockMs: 1200, turns: 8 },
])(
  'an event loop blocked $blockMs ms on each of $turns turns fails no command whose reply came in time, declares no gap, keeps every session',
  async ({ blockMs, turns }) => {
    const sockets: Socket[] = [];
    for (let i = 0; i < 5; i++) sockets.push(await hub.client('bot', { sub: `slow-${blockMs}-${i}` }));
    const closed = sockets.map((socket) => collect<{ code: string }>(socket, 'session:closed'));
    const disconnects = sockets.map((socket) => collect<string>(socket, 'disconnect'));
    const replies = sockets.map((socket) => collect<{ text: string }>(socket, 'message'));
    // The canary has had a round trip, and the connections are settled.
    await waitFor(async () => (await fetch(`${hub.url}/health/ready`)).status === 200, 10_000, 'the hub ready');
    const errorsBefore = await redisErrors();
    const linesBefore = lines.length;

    // Each blocked turn first sends a message from every client: the hub reads it, issues its Redis
    // commands, and their replies arrive while the next turn is blocked.
    const acks: Promise<Ack>[] = [];
    await new Promise<void>((resolve) => {
      let turn = 0;
      const spin = () => {
        for (const [i, socket] of sockets.entries()) acks.push(send(socket, `b${blockMs}-${turn}-${i}`));
        block(blockMs);
        if (++turn < turns) setImmediate(spin);
        else resolve();
      };
      setImmediate(spin);
    });
    const outcomes = await Promise.all(acks);

    const logged = lines.slice(linesBefore).map((line) => JSON.parse(line) as { msg: string; err?: { message?: string } });
    expect(logged.map((line) => `${line.msg} ${line.err?.message ?? ''}`)).toEqual([]);
    expect(closed.flat()).toEqual([]);
    expect(outcomes.filter((ack) => !ack.ok)).toEqual([]);
    expect(await redisErrors()).toEqual(errorsBefore);
    await waitFor(() => replies.every((seen) => seen.length >= turns), 10_000, 'every reply shown');

    // Nothing ended a session, and the clients still talk through the hub.
    const after = await Promise.all(sockets.map((socket, i) => send(socket, `after-${blockMs}-${i}`)));
    expect(after.every((ack) => ack.ok)).toBe(true);
    await waitFor(() => replies.every((seen, i) => seen.some((m) => m.text === `echo:after-${blockMs}-${i}`)), 10_000, 'the replies after');
    expect(closed.flat()).toEqual([]);
    expect(disconnects.flat()).toEqual([]);
    expect(sockets.every((socket) => socket.connected)).toBe(true);
  },
  90_000,
);

it('a subscription that stops delivering while the event loop is healthy is still found by the canary and ends the sessions', async () => {
  const sockets: Socket[] = [];
  for (let i = 0; i < 3; i++) sockets.push(await hub.client('bot', { sub: `lost-${i}` }));
  await waitFor(async () => (await fetch(`${hub.url}/health/ready`)).status === 200, 10_000, 'the hub ready');
  const reconnected = reconnectAfterSessionsEnd(sockets);
  const linesBefore = lines.length;

  // The hub stops reading its subscriber connection (a stalled subscription): both connections stay
  // up, the probes are published and never read back.
  const subscriber = (hub.hub.relay.namespaces.client.adapter as unknown as { subClient: { stream: NetSocket } }).subClient;
  subscriber.stream.pause();

  expect(await reconnected).toEqual(['SERVER_UNAVAILABLE', 'SERVER_UNAVAILABLE', 'SERVER_UNAVAILABLE']);
  const logged = lines.slice(linesBefore).map((line) => (JSON.parse(line) as { msg: string }).msg);
  expect(logged).toContain('pub/sub probe lost with Redis up; resubscribing');
  // The canary reconnects the subscriber after more misses, a gap of its own: it ends no session,
  // none came back while the subscriptions were not restored. Once they are, the sessions stay.
  const closedAgain = sockets.map((socket) => collect<{ code: string }>(socket, 'session:closed'));
  await waitFor(async () => (await fetch(`${hub.url}/health/ready`)).status === 200, 20_000, 'the hub ready again');
  const replies = sockets.map((socket) => collect<{ text: string }>(socket, 'message'));
  const after = await Promise.all(sockets.map((socket, i) => send(socket, `lost-after-${i}`)));
  expect(after.every((ack) => ack.ok)).toBe(true);
  await waitFor(() => replies.every((seen, i) => seen.some((m) => m.text === `echo:lost-after-${i}`)), 10_000, 'the replies after');
  expect(closedAgain.flat()).toEqual([]);
  expect(sockets.every((socket) => socket.connected)).toBe(true);
}, 60_000);
