import type { Socket } from 'socket.io-client';
import type { AgentFeedback, AgentStop, ClientInboundMessage, HistoryAck, MessageEnd, MessageStart, SendAck } from '../../src/protocol';
import { agentSocket, clientSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { ack, record, streamView, type Recorder } from '../helpers/streams';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';

let t: TestHub;
const opened: Socket[] = [];
beforeAll(async () => {
  t = await startHub({
    STREAM_IDLE_TIMEOUT_MS: '1500',
    STREAM_MAX_DURATION_MS: '4000',
    STREAM_STOP_GRACE_MS: '300',
    STREAM_MAX_OPEN: '3',
    STREAM_MAX_BYTES: '64',
    STREAM_DELTA_RATE_PER_S: '20',
    STREAM_DELTA_RATE_BURST: '30',
    ACTIVITY_TTL_MS: '400',
  });
});
afterAll(() => t.close());
afterEach(() => {
  for (const s of opened.splice(0)) s.disconnect();
});

async function runtime(agentId: string): Promise<{ socket: Socket; rec: Recorder }> {
  const socket = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId });
  opened.push(socket);
  const rec = record(socket);
  await connected(socket);
  return { socket, rec };
}

async function tab(agentId: string, sub: string, lastMessageId?: string): Promise<{ socket: Socket; rec: Recorder }> {
  const auth: Record<string, unknown> = { token: mintToken({ sub }), agentId };
  if (lastMessageId !== undefined) auth.lastMessageId = lastMessageId;
  const socket = clientSocket(t.url, auth);
  opened.push(socket);
  const rec = record(socket);
  await connected(socket);
  await rec.wait('session');
  return { socket, rec };
}

type Ack = { ok: boolean; id?: string; ts?: string; seq?: number; error?: { code: string } };
const start = (rt: Socket, payload: unknown) => ack<Ack>(rt, 'stream:start', payload);
const delta = (rt: Socket, id: string, text: string) => ack<Ack>(rt, 'stream:delta', { id, text });
const end = (rt: Socket, payload: unknown) => ack<Ack>(rt, 'stream:end', payload);
/** relay_stream_deltas_total by direction. */
async function deltaCounts(): Promise<{ in: number; out: number }> {
  const text = await t.hub.metrics.registry.getSingleMetricAsString('relay_stream_deltas_total');
  const count = (direction: string) => Number(new RegExp(`direction="${direction}"} (\\d+)`).exec(text)?.[1] ?? 0);
  return { in: count('in'), out: count('out') };
}
const history = async (c: Socket) => (await ack<HistoryAck & { ok: true }>(c, 'history', {})) as { messages: ClientInboundMessage[] };

describe('streamed replies on one hub', () => {
  it('sends start, deltas in order and the end to every tab, and logs the message once with its final text', async () => {
    const rt = await runtime('s-basic');
    const [a, b] = [await tab('s-basic', 'u1'), await tab('s-basic', 'u1')];
    const other = await tab('s-basic', 'u2');
    const started = await start(rt.socket, { to: 'u1', data: { model: 'x' } });
    expect(started).toMatchObject({ ok: true, id: expect.any(String), ts: expect.any(String) });
    const id = started.id!;
    const countedBefore = await deltaCounts();
    for (let i = 1; i <= 5; i++) expect(await delta(rt.socket, id, `w${i} `)).toEqual({ ok: true, seq: i });
    // Without a callback there is no ack, and the delta is applied all the same.
    rt.socket.emit('stream:delta', { id, text: 'tail' });
    const ended = await end(rt.socket, { id });
    expect(ended).toEqual({ ok: true, id, ts: started.ts });
    for (const { rec } of [a, b]) {
      const final = await rec.wait<MessageEnd>('message:end');
      expect(final).toEqual({
        id,
        ts: started.ts,
        agentId: 's-basic',
        author: 'agent',
        text: 'w1 w2 w3 w4 w5 tail',
        data: { model: 'x' },
        status: 'complete',
      });
      expect(rec.of<MessageStart>('message:start')).toEqual([
        { id, ts: started.ts, agentId: 's-basic', author: 'agent', data: { model: 'x' }, text: '', seq: 0 },
      ]);
      expect(rec.of<{ seq: number }>('message:delta').map((d) => d.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(streamView(rec, id)).toMatchObject({ text: 'w1 w2 w3 w4 w5 tail', seq: 6, gaps: 0, doubles: 0 });
    }
    // Six deltas in, each emitted to the user's two tabs here (not to u2's).
    const counted = await deltaCounts();
    expect({ in: counted.in - countedBefore.in, out: counted.out - countedBefore.out }).toEqual({ in: 6, out: 12 });
    expect(other.rec.events.filter((e) => e.event.startsWith('message'))).toEqual([]);
    const logged = (await history(a.socket)).messages;
    expect(logged).toEqual([
      { id, ts: started.ts, agentId: 's-basic', author: 'agent', text: 'w1 w2 w3 w4 w5 tail', data: { model: 'x' } },
    ]);
  });

  it('resumes a tab that connects mid-stream with the text so far, then the rest; a stream ended while away is replayed as its final', async () => {
    const rt = await runtime('s-resume');
    rt.socket.on('message', (_m: unknown, done: (r: unknown) => void) => done({ ok: true }));
    const first = await tab('s-resume', 'u1');
    const before = await ack<SendAck>(first.socket, 'message', { clientMessageId: 'q1', text: 'question' });
    rt.rec.events.length = 0;
    const { id } = await start(rt.socket, { to: 'u1', replyTo: (before as { id: string }).id });
    for (const w of ['a', 'b', 'c']) await delta(rt.socket, id!, w);
    const late = await tab('s-resume', 'u1');
    const resumed = await late.rec.wait<MessageStart>('message:start');
    expect(resumed).toMatchObject({ id, text: 'abc', seq: 3 });
    // The start comes after session, before anything live.
    expect(late.rec.events.map((e) => e.event).slice(0, 2)).toEqual(['session', 'message:start']);
    await delta(rt.socket, id!, 'd');
    await end(rt.socket, { id, status: 'error' });
    await late.rec.wait('message:end');
    expect(streamView(late.rec, id!)).toMatchObject({ text: 'abcd', seq: 4, gaps: 0, doubles: 0, end: { status: 'error', text: 'abcd' } });
    // Away since the question: the replay has the final, with its status.
    const back = await tab('s-resume', 'u1', (before as { id: string }).id);
    const session = await back.rec.wait<{ recovered: boolean }>('session');
    expect(session.recovered).toBe(true);
    expect(back.rec.of<ClientInboundMessage>('message')).toEqual([
      expect.objectContaining({ id, text: 'abcd', status: 'error', replyTo: (before as { id: string }).id }),
    ]);
    expect(back.rec.of('message:start')).toEqual([]);
  });

  it('ends a stream interrupted when its runtime leaves, and timeout when idle or too long', async () => {
    const rt = await runtime('s-end');
    const c = await tab('s-end', 'u1');
    const { id } = await start(rt.socket, { to: 'u1' });
    await delta(rt.socket, id!, 'partial');
    rt.socket.disconnect();
    expect(await c.rec.wait<MessageEnd>('message:end', (e) => e.id === id)).toMatchObject({ text: 'partial', status: 'interrupted' });

    const rt2 = await runtime('s-end');
    const idle = (await start(rt2.socket, { to: 'u1' })).id!;
    const t0 = Date.now();
    expect(await c.rec.wait<MessageEnd>('message:end', (e) => e.id === idle)).toMatchObject({ text: '', status: 'timeout' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    expect(await delta(rt2.socket, idle, 'late')).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });

    const long = (await start(rt2.socket, { to: 'u1' })).id!;
    const t1 = Date.now();
    const ticker = setInterval(() => rt2.socket.emit('stream:delta', { id: long, text: '.' }), 300);
    try {
      expect(await c.rec.wait<MessageEnd>('message:end', (e) => e.id === long)).toMatchObject({ status: 'timeout' });
    } finally {
      clearInterval(ticker);
    }
    expect(Date.now() - t1).toBeGreaterThanOrEqual(3900);
  }, 20_000);

  it('stops a stream by id: the runtime hears it; unhonoured, the hub ends it cancelled after the grace', async () => {
    const rt = await runtime('s-stop');
    const c = await tab('s-stop', 'u1');
    const stranger = await tab('s-stop', 'u2');
    const { id } = await start(rt.socket, { to: 'u1' });
    await delta(rt.socket, id!, 'so far');
    expect(await ack(stranger.socket, 'stop', { id })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
    expect(await ack(c.socket, 'stop', { id })).toEqual({ ok: true });
    expect(await rt.rec.wait<AgentStop>('stop')).toEqual({ id, from: 'u1' });
    expect(await c.rec.wait<MessageEnd>('message:end')).toMatchObject({ id, text: 'so far', status: 'cancelled' });
    expect(await ack(c.socket, 'stop', { id })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
    // Honoured: the runtime ends it itself.
    const { id: id2 } = await start(rt.socket, { to: 'u1' });
    const honoured = rt.rec
      .wait<AgentStop>('stop', (s) => s.id === id2)
      .then(() => end(rt.socket, { id: id2, status: 'cancelled', text: 'stopped' }));
    await ack(c.socket, 'stop', { id: id2 });
    expect(await honoured).toMatchObject({ ok: true, id: id2 });
    expect(await c.rec.wait<MessageEnd>('message:end', (e) => e.id === id2)).toMatchObject({ text: 'stopped', status: 'cancelled' });
    expect(await t.hub.metrics.registry.getSingleMetricAsString('relay_stream_stops_total')).toMatch(/result="ended_by_hub"} 1/);
  });

  it('stops by clientMessageId before the stream exists and once it answers; unknown ids are not found', async () => {
    const rt = await runtime('s-stopc');
    rt.socket.on('message', (_m: unknown, done: (r: unknown) => void) => done({ ok: true }));
    const c = await tab('s-stopc', 'u1');
    const sent = (await ack<SendAck>(c.socket, 'message', { clientMessageId: 'ask-1', text: 'hi' })) as { ok: true; id: string };
    expect(await ack(c.socket, 'stop', { clientMessageId: 'ask-1' })).toEqual({ ok: true });
    expect(await rt.rec.wait<AgentStop>('stop')).toEqual({ messageId: sent.id, from: 'u1' });
    const { id } = await start(rt.socket, { to: 'u1', replyTo: sent.id });
    expect(await ack(c.socket, 'stop', { clientMessageId: 'ask-1' })).toEqual({ ok: true });
    expect(await rt.rec.wait<AgentStop>('stop', (s) => s.id === id)).toEqual({ id, from: 'u1' });
    expect(await ack(c.socket, 'stop', { clientMessageId: 'never-sent' })).toMatchObject({
      ok: false,
      error: { code: 'STREAM_NOT_FOUND' },
    });
    const other = await tab('s-stopc', 'u2');
    expect(await ack(other.socket, 'stop', { clientMessageId: 'ask-1' })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
  });

  it('lets only the owning runtime socket append or end, and refuses bad input with a clear code, changing nothing', async () => {
    const rt = await runtime('s-bad');
    const intruder = await runtime('s-bad');
    const c = await tab('s-bad', 'u1');
    const { id } = await start(rt.socket, { to: 'u1' });
    await delta(rt.socket, id!, 'ok');
    expect(await delta(intruder.socket, id!, 'evil')).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
    expect(await end(intruder.socket, { id })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
    expect(await start(rt.socket, { to: '*' })).toMatchObject({ ok: false, error: { code: 'INVALID_PAYLOAD' } });
    expect(await delta(rt.socket, id!, '')).toMatchObject({ ok: false, error: { code: 'INVALID_PAYLOAD' } });
    expect(await end(rt.socket, { id, status: 'timeout' })).toMatchObject({ ok: false, error: { code: 'INVALID_PAYLOAD' } });
    expect(await delta(rt.socket, id!, 'x'.repeat(63))).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE' } });
    expect(await delta(rt.socket, id!, '!')).toEqual({ ok: true, seq: 2 });
    expect(await end(rt.socket, { id, text: 'y'.repeat(65) })).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE' } });
    // STREAM_MAX_OPEN (3) per socket, the first counting.
    const more = [await start(rt.socket, { to: 'u1' }), await start(rt.socket, { to: 'u1' })];
    expect(more.every((a) => a.ok)).toBe(true);
    expect(await start(rt.socket, { to: 'u1' })).toMatchObject({ ok: false, error: { code: 'STREAM_LIMIT' } });
    expect((await start(intruder.socket, { to: 'u1' })).ok).toBe(true);
    expect(await end(rt.socket, { id })).toMatchObject({ ok: true });
    expect(await c.rec.wait<MessageEnd>('message:end', (e) => e.id === id)).toMatchObject({ text: 'ok!', status: 'complete' });
    expect(streamView(c.rec, id!)).toMatchObject({ seq: 2, gaps: 0, doubles: 0 });
    // Deltas have their own bucket per runtime socket (burst 30): past it RATE_LIMITED.
    const fresh = await runtime('s-bad');
    const burstId = (await start(fresh.socket, { to: 'u1' })).id!;
    const burst = await Promise.all(Array.from({ length: 40 }, () => delta(fresh.socket, burstId, 'a')));
    expect(burst.filter((a) => a.ok)).toHaveLength(30);
    expect(burst.filter((a) => a.error?.code === 'RATE_LIMITED')).toHaveLength(10);
    const replyAck = await ack(fresh.socket, 'reply', { to: 'u1', text: 'replies unaffected' });
    expect(replyAck).toMatchObject({ ok: true });
  });

  it('shows activity to every tab of the user, cleared by a stream reaching them or after ACTIVITY_TTL_MS', async () => {
    const rt = await runtime('s-act');
    const [a, b] = [await tab('s-act', 'u1'), await tab('s-act', 'u1')];
    const other = await tab('s-act', 'u2');
    expect(await ack(rt.socket, 'activity', { to: 'u1', state: 'thinking', label: 'pondering' })).toEqual({ ok: true });
    for (const { rec } of [a, b]) {
      expect(await rec.wait('agent:activity')).toEqual({ agentId: 's-act', state: 'thinking', label: 'pondering', ts: expect.any(String) });
    }
    await start(rt.socket, { to: 'u1' });
    expect(await a.rec.wait('agent:activity', (x: { state: string }) => x.state === 'idle')).toMatchObject({ state: 'idle' });
    await ack(rt.socket, 'activity', { to: 'u1', state: 'tool', label: 'search' });
    const t0 = Date.now();
    await b.rec.wait('agent:activity', (x: { state: string }) => x.state === 'idle' && Date.now() - t0 > 300);
    expect(other.rec.of('agent:activity')).toEqual([]);
    expect(await ack(rt.socket, 'activity', { to: 'u1', state: 'dancing' })).toMatchObject({
      ok: false,
      error: { code: 'INVALID_PAYLOAD' },
    });
    // Never logged or replayed.
    expect((await history(a.socket)).messages.every((m) => m.author === 'agent')).toBe(true);
  });

  it('keeps feedback on bot messages, tells the bot, and shows it in history; other ids are MESSAGE_NOT_FOUND', async () => {
    const rt = await runtime('s-fb');
    rt.socket.on('message', (_m: unknown, done: (r: unknown) => void) => done({ ok: true }));
    const c = await tab('s-fb', 'u1');
    const user = (await ack<SendAck>(c.socket, 'message', { clientMessageId: 'f1', text: 'hi' })) as { id: string };
    const reply = await ack<Ack>(rt.socket, 'reply', { to: 'u1', text: 'hello' });
    expect(await ack(c.socket, 'feedback', { id: reply.id, rating: 'up', comment: 'nice' })).toEqual({ ok: true });
    expect(await rt.rec.wait<AgentFeedback>('feedback')).toEqual({ id: reply.id, from: 'u1', rating: 'up', comment: 'nice' });
    expect(await ack(c.socket, 'feedback', { id: user.id, rating: 'up' })).toMatchObject({
      ok: false,
      error: { code: 'MESSAGE_NOT_FOUND' },
    });
    const stranger = await tab('s-fb', 'u2');
    expect(await ack(stranger.socket, 'feedback', { id: reply.id, rating: 'down' })).toMatchObject({
      ok: false,
      error: { code: 'MESSAGE_NOT_FOUND' },
    });
    expect(await ack(c.socket, 'feedback', { id: reply.id, rating: 'meh' })).toMatchObject({
      ok: false,
      error: { code: 'INVALID_PAYLOAD' },
    });
    let page = (await history(c.socket)).messages;
    expect(page.find((m) => m.id === reply.id)?.feedback).toEqual({ rating: 'up', comment: 'nice', ts: expect.any(String) });
    expect(await ack(c.socket, 'feedback', { id: reply.id, rating: null })).toEqual({ ok: true });
    page = (await history(c.socket)).messages;
    expect(page.find((m) => m.id === reply.id)?.feedback).toBeUndefined();
    const metrics = await t.hub.metrics.registry.getSingleMetricAsString('relay_feedback_total');
    expect(metrics).toMatch(/rating="up"} 1/);
    expect(metrics).toMatch(/rating="none"} 1/);
  });
});
