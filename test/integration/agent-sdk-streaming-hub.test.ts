import type { Socket } from 'socket.io-client';
import type { AgentFeedback, MessageDelta, MessageEnd, MessageStart } from '../../src/protocol';
import { RelayAgent, type AgentStream } from '../../src/sdk/agent';
import { startHub, type TestHub } from '../helpers/hub';
import { ack, record, streamView, type Recorder } from '../helpers/streams';
import { TEST_AGENT_KEY } from '../helpers/tokens';
import { sleep } from '../helpers/wait';

/** The agent SDK's streams against the real hub, seen by a raw client of the conversation. */
describe('agent SDK streams through the hub', () => {
  let t: TestHub;
  const agents: RelayAgent[] = [];
  beforeAll(async () => {
    t = await startHub({ STREAM_MAX_BYTES: String(11 * 1024 * 1024), STREAM_STOP_GRACE_MS: '10000' });
  });
  afterAll(async () => {
    for (const a of agents) a.close();
    await t.close();
  });

  let n = 0;
  /** A fresh bot with one runtime (SDK options given) and one client of user u1. */
  async function pair(
    options: Partial<ConstructorParameters<typeof RelayAgent>[0]> = {},
  ): Promise<{ agent: RelayAgent; client: Socket; seen: Recorder }> {
    const agentId = `sdk-stream-${++n}`;
    const agent = new RelayAgent({ url: t.url, apiKey: TEST_AGENT_KEY, agentId, ...options });
    agents.push(agent);
    await agent.connect();
    const client = await t.client(agentId, { sub: 'u1' });
    return { agent, client, seen: record(client) };
  }

  it('pipes an async generator with streamFrom: the client sees it grow in order and end complete, logged once', async () => {
    const { agent, client, seen } = await pair({ coalesceMs: 5 });
    const words = Array.from({ length: 30 }, (_, i) => `w${i} `);
    async function* tokens() {
      for (const word of words) {
        await sleep(10);
        yield word;
      }
    }
    const result = await agent.streamFrom('u1', tokens(), { data: { model: 'test' } });
    expect(result.status).toBe('complete');
    const end = await seen.wait<MessageEnd>('message:end', (m) => m.id === result.id);
    expect(end).toMatchObject({ text: words.join(''), status: 'complete', data: { model: 'test' } });
    const view = streamView(seen, result.id);
    expect(view).toMatchObject({ text: words.join(''), gaps: 0, doubles: 0 });
    expect(seen.of<MessageDelta>('message:delta').length).toBeGreaterThan(5);
    const history = await ack<{ messages: Array<{ id: string; text: string }> }>(client, 'history', {});
    expect(history.messages.filter((m) => m.id === result.id)).toEqual([expect.objectContaining({ text: words.join('') })]);
  });

  it('coalesces writes made within coalesceMs into one message:delta', async () => {
    const { agent, seen } = await pair({ coalesceMs: 150 });
    const s = await agent.stream('u1');
    for (let i = 0; i < 40; i++) await s.write(`${i},`);
    await s.end();
    await seen.wait<MessageEnd>('message:end', (m) => m.id === s.id);
    const deltas = seen.of<MessageDelta>('message:delta').filter((d) => d.id === s.id);
    expect(deltas).toEqual([{ id: s.id, seq: 1, text: Array.from({ length: 40 }, (_, i) => `${i},`).join(''), index: 0 }]);
  });

  it("aborts streamFrom on the user's stop: the stream ends cancelled with the text so far, the source is closed", async () => {
    const { agent, client, seen } = await pair({ coalesceMs: 0 });
    let closed!: () => void;
    const sourceClosed = new Promise<void>((resolve) => (closed = resolve));
    async function* forever() {
      try {
        for (let i = 0; ; i++) {
          await sleep(10);
          yield `t${i} `;
        }
      } finally {
        closed();
      }
    }
    const piped = agent.streamFrom('u1', forever());
    const start = await seen.wait<MessageStart>('message:start');
    await seen.wait<MessageDelta>('message:delta', (d) => d.id === start.id && d.seq >= 3);
    expect(await ack(client, 'stop', { id: start.id })).toEqual({ ok: true });
    expect((await piped).status).toBe('cancelled');
    await sourceClosed;
    const end = await seen.wait<MessageEnd>('message:end', (m) => m.id === start.id);
    expect(end.status).toBe('cancelled');
    expect(end.text).toBe(streamView(seen, start.id).text);
    expect(end.text).toMatch(/^t0 t1 t2 /);
  });

  it("aborts the handler's signal on a stop by clientMessageId before any stream exists", async () => {
    const { agent, client } = await pair();
    const aborted = new Promise<string>((resolve) =>
      agent.onMessage((m, { signal }) => new Promise<void>((done) => signal.addEventListener('abort', () => (resolve(m.text), done())))),
    );
    expect(await ack(client, 'message', { clientMessageId: 'c-1', text: 'question' })).toMatchObject({ ok: true });
    expect(await ack(client, 'stop', { clientMessageId: 'c-1' })).toEqual({ ok: true });
    expect(await aborted).toBe('question');
  });

  it('holds a 10 MB writer to highWaterBytes against the hub and delivers every byte in order', async () => {
    const highWaterBytes = 64 * 1024;
    const { agent, seen } = await pair({ coalesceMs: 5, highWaterBytes });
    const s: AgentStream = await agent.stream('u1');
    const chunk = 'y'.repeat(1023) + '\n';
    const total = 10 * 1024 * 1024;
    let maxBuffered = 0;
    for (let written = 0; written < total; written += chunk.length) {
      await s.write(chunk);
      maxBuffered = Math.max(maxBuffered, s.bufferedBytes);
    }
    await s.end();
    const end = await seen.wait<MessageEnd>('message:end', (m) => m.id === s.id, 30_000);
    expect(end.text.length).toBe(total);
    expect(streamView(seen, s.id)).toMatchObject({ gaps: 0, doubles: 0 });
    expect(streamView(seen, s.id).text.length).toBe(total);
    expect(maxBuffered).toBeLessThanOrEqual(highWaterBytes + chunk.length);
  }, 60_000);

  it('sends activity to the client and hands its feedback to onFeedback', async () => {
    const { agent, client, seen } = await pair();
    await agent.activity('u1', 'tool', 'searching');
    expect(await seen.wait('agent:activity')).toMatchObject({ state: 'tool', label: 'searching' });
    const { id } = await agent.reply('u1', 'an answer');
    const feedback = new Promise<AgentFeedback>((resolve) => agent.onFeedback(resolve));
    expect(await ack(client, 'feedback', { id, rating: 'up', comment: 'good' })).toEqual({ ok: true });
    expect(await feedback).toEqual({ id, from: 'u1', rating: 'up', comment: 'good' });
  });
});
