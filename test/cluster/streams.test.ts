// Streamed replies across hub processes on one real Redis (docs/streaming.md): deltas in order on
// every replica, resume on another replica while a writer keeps appending, a replay of a stream that
// ended while the client was away, hub-side ends (interrupted, cancelled, a dead replica's streams),
// stop, activity, feedback with REST, and Redis going away.
import type { Socket } from 'socket.io-client';
import type { AgentStop, ClientInboundMessage, MessageEnd, MessageStart } from '../../src/protocol';
import { startTestCluster, type TestCluster } from '../helpers/cluster';
import { ack, streamPeers, streamView, type Recorder } from '../helpers/streams';
import { mintToken } from '../helpers/tokens';
import { sleep, waitFor } from '../helpers/wait';

let cluster: TestCluster;
let R: string[];
const IDLE_MS = 3000;
beforeAll(async () => {
  cluster = await startTestCluster(
    {
      STREAM_IDLE_TIMEOUT_MS: String(IDLE_MS),
      STREAM_STOP_GRACE_MS: '500',
      STREAM_DELTA_RATE_PER_S: '5000',
      STREAM_DELTA_RATE_BURST: '5000',
    },
    3,
  );
  R = cluster.handle.replicas.map((r) => r.url);
}, 60_000);
afterAll(() => cluster?.close(), 60_000);

const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.disconnect();
});

type Ack = { ok: boolean; id?: string; ts?: string; seq?: number; error?: { code: string } };

const { runtime, tab } = streamPeers(() => cluster, sockets);

it('relays 500 deltas in order to tabs on other replicas; 20 tabs reconnecting mid-stream get the text so far and the rest, nothing doubled or skipped', async () => {
  const rt = await runtime(R[0], 'c-stress');
  const steady = await tab(R[1], 'c-stress', 'u1');
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
  let written = '';
  const writer = (async () => {
    for (let i = 1; i <= 500; i++) {
      const piece = `${i} `;
      // Every tenth delta waits for its ack; the rest are fire and forget, as the agent SDK sends them.
      if (i % 10 === 0) expect(await ack<Ack>(rt.socket, 'stream:delta', { id, text: piece })).toEqual({ ok: true, seq: i });
      else rt.socket.emit('stream:delta', { id, text: piece });
      written += piece;
      if (i % 25 === 0) await sleep(15);
    }
  })();
  const visits: { text: string; seq: number; gaps: number; doubles: number }[] = [];
  let last: { socket: Socket; rec: Recorder } | undefined;
  for (let n = 0; n < 20; n++) {
    last?.socket.disconnect();
    last = await tab(R[1 + (n % 2)], 'c-stress', 'u1');
    await sleep(20);
    visits.push(streamView(last.rec, id!));
  }
  await writer;
  expect(await ack<Ack>(rt.socket, 'stream:end', { id })).toMatchObject({ ok: true, id });
  const final = await last!.rec.wait<MessageEnd>('message:end');
  expect(final).toMatchObject({ id, text: written, status: 'complete' });
  expect(streamView(last!.rec, id!)).toMatchObject({ text: written, seq: 500, gaps: 0, doubles: 0 });
  for (const visit of visits) {
    expect({ gaps: visit.gaps, doubles: visit.doubles }).toEqual({ gaps: 0, doubles: 0 });
    expect(written.startsWith(visit.text)).toBe(true);
  }
  // Resumed mid-stream at least once: not every visit came before the first delta or after the last.
  expect(visits.some((v) => v.seq > 0 && v.seq < 500)).toBe(true);
  await steady.rec.wait('message:end');
  expect(steady.rec.of<{ seq: number }>('message:delta').map((d) => d.seq)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
}, 60_000);

it('replays a stream that ended while the client was away as its final message, on another replica', async () => {
  const rt = await runtime(R[0], 'c-away');
  const c = await tab(R[1], 'c-away', 'u1');
  const seen = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: 'seen' });
  await c.rec.wait('message', (m: ClientInboundMessage) => m.id === seen.id);
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
  await ack<Ack>(rt.socket, 'stream:delta', { id, text: 'half' });
  await c.rec.wait('message:delta');
  c.socket.disconnect();
  await ack<Ack>(rt.socket, 'stream:delta', { id, text: ' and the rest' });
  await ack<Ack>(rt.socket, 'stream:end', { id });
  const back = await tab(R[2], 'c-away', 'u1', seen.id);
  expect(await back.rec.wait('session')).toMatchObject({ recovered: true });
  expect(back.rec.of<ClientInboundMessage>('message')).toEqual([expect.objectContaining({ id, text: 'half and the rest' })]);
  expect(back.rec.of('message:start')).toEqual([]);
});

it('ends a stream interrupted when its runtime leaves, seen on another replica', async () => {
  const rt = await runtime(R[0], 'c-left');
  const c = await tab(R[2], 'c-left', 'u1');
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
  await ack<Ack>(rt.socket, 'stream:delta', { id, text: 'so far' });
  rt.socket.disconnect();
  expect(await c.rec.wait<MessageEnd>('message:end')).toMatchObject({ id, text: 'so far', status: 'interrupted' });
});

it('stops by id and by clientMessageId across replicas; a raw runtime that ignores it gets its stream cancelled after the grace', async () => {
  const rt = await runtime(R[0], 'c-stop');
  const c = await tab(R[1], 'c-stop', 'u1');
  const other = await tab(R[2], 'c-stop', 'u2');
  const sent = await ack<Ack>(c.socket, 'message', { clientMessageId: 'q', text: 'question' });
  expect(await ack(c.socket, 'stop', { clientMessageId: 'q' })).toEqual({ ok: true });
  expect(await rt.rec.wait<AgentStop>('stop')).toEqual({ messageId: sent.id, from: 'u1' });
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1', replyTo: sent.id });
  await ack<Ack>(rt.socket, 'stream:delta', { id, text: 'partial' });
  expect(await ack(other.socket, 'stop', { id })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
  expect(await ack(c.socket, 'stop', { clientMessageId: 'q' })).toEqual({ ok: true });
  expect(await rt.rec.wait<AgentStop>('stop', (s) => s.id === id)).toEqual({ id, from: 'u1' });
  expect(await c.rec.wait<MessageEnd>('message:end')).toMatchObject({ id, text: 'partial', status: 'cancelled' });
  // A runtime that honours it.
  const s2 = (await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' })).id;
  const honoured = rt.rec
    .wait<AgentStop>('stop', (s) => s.id === s2)
    .then(() => ack<Ack>(rt.socket, 'stream:end', { id: s2, status: 'cancelled', text: 'ok, stopped' }));
  expect(await ack(c.socket, 'stop', { id: s2 })).toEqual({ ok: true });
  expect(await honoured).toMatchObject({ ok: true });
  expect(await c.rec.wait<MessageEnd>('message:end', (e) => e.id === s2)).toMatchObject({ text: 'ok, stopped', status: 'cancelled' });
});

it('lets no other runtime of the bot append to or end a stream, on any replica', async () => {
  const rt = await runtime(R[0], 'c-own');
  const [near, far] = [await runtime(R[0], 'c-own'), await runtime(R[1], 'c-own')];
  const c = await tab(R[2], 'c-own', 'u1');
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
  for (const intruder of [near, far]) {
    expect(await ack(intruder.socket, 'stream:delta', { id, text: 'x' })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
    expect(await ack(intruder.socket, 'stream:end', { id })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
  }
  await ack<Ack>(rt.socket, 'stream:end', { id, text: 'mine' });
  expect(await c.rec.wait<MessageEnd>('message:end')).toMatchObject({ text: 'mine', status: 'complete' });
  expect(c.rec.of('message:delta')).toEqual([]);
});

it('shows activity on every replica and keeps feedback, told to the bot and shown by history and REST', async () => {
  const rt = await runtime(R[0], 'c-fb');
  const [a, b] = [await tab(R[1], 'c-fb', 'u1'), await tab(R[2], 'c-fb', 'u1')];
  await ack(rt.socket, 'activity', { to: 'u1', state: 'typing' });
  for (const t of [a, b]) expect(await t.rec.wait('agent:activity')).toMatchObject({ agentId: 'c-fb', state: 'typing' });
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
  for (const t of [a, b]) await t.rec.wait('agent:activity', (x: { state: string }) => x.state === 'idle');
  // While it is open, history and REST show its start marked streaming; once ended, its final without the mark.
  const adminToken = mintToken({ sub: 'ops', roles: ['ADMIN'] }, cluster.handle.secrets.ADMIN_JWT_SECRET);
  const rest = async () => {
    const res = await fetch(`${R[2]}/agents/c-fb/conversations/u1/messages`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: ClientInboundMessage[] }).data;
  };
  const open = { id, ts: expect.any(String), agentId: 'c-fb', author: 'agent', text: '', streaming: true };
  expect((await ack<{ messages: ClientInboundMessage[] }>(a.socket, 'history', {})).messages).toEqual([open]);
  expect(await rest()).toEqual([open]);
  await ack<Ack>(rt.socket, 'stream:end', { id, text: 'answer' });
  expect(await ack(b.socket, 'feedback', { id, rating: 'down', comment: 'wrong' })).toEqual({ ok: true });
  expect(await rt.rec.wait('feedback')).toEqual({ id, from: 'u1', rating: 'down', comment: 'wrong' });
  const page = await ack<{ messages: ClientInboundMessage[] }>(a.socket, 'history', {});
  expect(page.messages).toEqual([
    expect.objectContaining({ id, text: 'answer', feedback: { rating: 'down', comment: 'wrong', ts: expect.any(String) } }),
  ]);
  const data = await rest();
  expect(data).toEqual([expect.objectContaining({ id, feedback: expect.objectContaining({ rating: 'down' }) })]);
  expect(data[0].streaming).toBeUndefined();
});

it("ends the streams of a SIGKILLed replica's runtimes within the idle timeout, on the other replicas", async () => {
  const rt = await runtime(R[0], 'c-kill');
  const c = await tab(R[1], 'c-kill', 'u1');
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
  await ack<Ack>(rt.socket, 'stream:delta', { id, text: 'before the crash' });
  await c.rec.wait('message:delta');
  const killedAt = Date.now();
  await cluster.handle.replicas[0].kill('SIGKILL');
  const end = await c.rec.wait<MessageEnd>('message:end', undefined, 2 * IDLE_MS);
  expect(end).toMatchObject({ id, text: 'before the crash', status: 'interrupted' });
  expect(Date.now() - killedAt).toBeLessThanOrEqual(IDLE_MS);
  const back = await tab(R[2], 'c-kill', 'u1');
  expect(back.rec.of<MessageStart>('message:start')).toEqual([]);
}, 30_000);

it('answers start, acked deltas and end with SERVER_UNAVAILABLE while Redis is down; open streams end error once Redis takes the end, replayed as such', async () => {
  const rt = await runtime(R[1], 'c-down');
  const c = await tab(R[1], 'c-down', 'u1');
  const before = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: 'before' });
  const { id } = await ack<Ack>(rt.socket, 'stream:start', { to: 'u1' });
  await ack<Ack>(rt.socket, 'stream:delta', { id, text: 'kept' });
  await c.rec.wait('message:delta');
  await cluster.handle.redis.kill('SIGKILL');
  try {
    expect(await ack(rt.socket, 'stream:start', { to: 'u1' })).toMatchObject({ ok: false, error: { code: 'SERVER_UNAVAILABLE' } });
    expect(await ack(rt.socket, 'stream:delta', { id, text: ' lost' })).toMatchObject({ ok: false, error: { code: 'SERVER_UNAVAILABLE' } });
    expect(await ack(rt.socket, 'stream:end', { id })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
    // Not told it ended while the end cannot be logged (a resume from it would skip what is logged before).
    expect(c.rec.of('message:end')).toEqual([]);
  } finally {
    await cluster.handle.redis.start();
  }
  await waitFor(
    async () => (await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: 'back' }).catch(() => ({ ok: false }))).ok,
    20_000,
    'Redis back',
  );
  // The sweep ends it `error` with the text Redis holds; a tab resuming from before it gets its final
  // in the replay (before that, the snapshot still shows it open). A replica may refuse handshakes
  // while it restores its subscriptions.
  let back: { socket: Socket; rec: Recorder } | undefined;
  await waitFor(
    async () => {
      back?.socket.disconnect();
      back = await tab(R[2], 'c-down', 'u1', before.id).catch(() => undefined);
      return back?.rec.of<ClientInboundMessage>('message').some((m) => m.id === id) === true;
    },
    10_000,
    'the stream ended in the log',
  );
  expect(await back!.rec.wait('session')).toMatchObject({ recovered: true });
  expect(back!.rec.of<ClientInboundMessage>('message')).toEqual(
    expect.arrayContaining([expect.objectContaining({ id, text: 'kept', status: 'error' })]),
  );
  expect(back!.rec.of('message:start')).toEqual([]);
}, 60_000);
