import { Events } from '../../src/protocol';
import { RelayAgentError, type AgentStream, type MessageContext, type RelayAgent } from '../../src/sdk/agent';
import { FakeAgentHub } from '../helpers/fake-agent-hub';
import { sleep } from '../helpers/wait';

/** The agent SDK's streams against a scripted Socket.IO hub (the real hub's streams: agent-sdk-streaming-hub.test.ts). */
describe('agent SDK: streamed replies', () => {
  let hub: FakeAgentHub;
  const agents: RelayAgent[] = [];
  const agent = async (options: Parameters<FakeAgentHub['agent']>[0] = {}) => {
    const a = await hub.agent(options);
    agents.push(a);
    return a;
  };

  beforeEach(async () => {
    hub = await FakeAgentHub.start();
  });
  afterEach(async () => {
    for (const a of agents.splice(0)) a.close();
    await hub.stop();
  });

  it('pipes an async generator with streamFrom and ends it complete', async () => {
    const a = await agent({ coalesceMs: 5 });
    async function* tokens() {
      for (const word of ['Hello', ', ', 'wor', 'ld', '!']) {
        await sleep(15);
        yield word;
      }
    }
    const result = await a.streamFrom('u1', tokens(), { replyTo: 'm1', data: { model: 'x' } });
    expect(result).toEqual({ id: 's1', ts: expect.any(String), status: 'complete' });
    const s = hub.stream('s1');
    expect(s.start).toEqual({ to: 'u1', replyTo: 'm1', data: { model: 'x' } });
    expect(s.text).toBe('Hello, world!');
    expect(s.deltas.length).toBeGreaterThan(1);
    expect(s.end).toEqual({ id: 's1' });
  });

  it('coalesces the writes made within coalesceMs into one delta', async () => {
    const a = await agent({ coalesceMs: 200 });
    const s = await a.stream('u1');
    const words = Array.from({ length: 50 }, (_, i) => `w${i} `);
    for (const word of words) await s.write(word);
    await hub.until(() => hub.stream(s.id).deltas.length === 1);
    expect(hub.stream(s.id).deltas.map((d) => d.text)).toEqual([words.join('')]);
    // A later burst is a delta of its own; end sends what is still coalescing first.
    await s.write('tail');
    await s.end();
    expect(hub.stream(s.id).deltas.map((d) => d.text)).toEqual([words.join(''), 'tail']);
    expect(hub.stream(s.id).end).toEqual({ id: s.id });
  });

  it('sends each write as its own delta with coalesceMs 0', async () => {
    const a = await agent({ coalesceMs: 0 });
    const s = await a.stream('u1');
    for (const word of ['a', 'b', 'c']) await s.write(word);
    await s.end({ status: 'complete' });
    expect(hub.stream(s.id).deltas.map((d) => d.text)).toEqual(['a', 'b', 'c']);
  });

  it('aborts the stream and the handler on a stop, ends cancelled and closes the source', async () => {
    const a = await agent({ coalesceMs: 0 });
    let onClosed!: () => void;
    const closed = new Promise<void>((resolve) => (onClosed = resolve));
    async function* forever() {
      try {
        for (let i = 0; ; i++) {
          await sleep(10);
          yield `t${i} `;
        }
      } finally {
        onClosed();
      }
    }
    const handled = new Promise<{ context: MessageContext; result: Awaited<ReturnType<RelayAgent['streamFrom']>> }>((resolve, reject) =>
      a.onMessage((m, context) =>
        a.streamFrom(m.from, forever(), { replyTo: m.id }).then((result) => resolve({ context, result }), reject),
      ),
    );
    await hub.message('m1');
    await hub.until(() => (hub.streams.get('s1')?.deltas.length ?? 0) >= 3);
    hub.last.emit(Events.stop, { id: 's1', from: 'u1' });
    const { context, result } = await handled;
    expect(result.status).toBe('cancelled');
    expect(hub.stream('s1').end).toEqual({ id: 's1', status: 'cancelled' });
    // The handler's signal: a stop of a stream replying to its message stops the handler too.
    expect(context.signal.aborted).toBe(true);
    await closed;
    const deltas = hub.stream('s1').deltas.length;
    await sleep(50);
    expect(hub.stream('s1').deltas.length).toBe(deltas);
  });

  it('stops by the message id before the stream exists: the handler aborts and a later stream starts stopped', async () => {
    const a = await agent();
    const signals: AbortSignal[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const streamed = new Promise<AgentStream>((resolve) =>
      a.onMessage(async (m, { signal }) => {
        signals.push(signal);
        await released;
        resolve(await a.stream(m.from, { replyTo: m.id }));
      }),
    );
    await hub.message('m7');
    hub.last.emit(Events.stop, { messageId: 'm7', from: 'u1' });
    await new Promise<void>((resolve) => signals[0].addEventListener('abort', () => resolve()));
    release();
    const s = await streamed;
    expect(s.signal.aborted).toBe(true);
    await s.write('dropped after the stop');
    await s.end();
    expect(hub.stream(s.id).deltas).toEqual([]);
    expect(hub.stream(s.id).end).toEqual({ id: s.id, status: 'cancelled' });
  });

  it('ignores a stop for an unknown stream and leaves other streams open', async () => {
    const a = await agent({ coalesceMs: 0 });
    const s = await a.stream('u1', { replyTo: 'm1' });
    hub.last.emit(Events.stop, { id: 'nope', from: 'u1' });
    hub.last.emit(Events.stop, { messageId: 'm2', from: 'u1' });
    await s.write('still here');
    await hub.until(() => hub.stream(s.id).text === 'still here');
    expect(s.signal.aborted).toBe(false);
  });

  it('ends the stream with error and rethrows when the source throws', async () => {
    const a = await agent();
    const boom = new Error('model overloaded');
    async function* failing() {
      yield 'partial ';
      throw boom;
    }
    await expect(a.streamFrom('u1', failing())).rejects.toBe(boom);
    expect(hub.stream('s1').text).toBe('partial ');
    expect(hub.stream('s1').end).toEqual({ id: 's1', status: 'error' });
  });

  it('refuses a non-string chunk with INVALID_PAYLOAD and ends the stream with error', async () => {
    const a = await agent();
    async function* objects() {
      yield { choices: [] } as unknown as string;
    }
    await expect(a.streamFrom('u1', objects())).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    expect(hub.stream('s1')).toMatchObject({ text: '', end: { id: 's1', status: 'error' } });
  });

  it('holds a 10 MB writer against a slow-acking hub within highWaterBytes, and loses nothing', async () => {
    const highWaterBytes = 64 * 1024;
    const a = await agent({ coalesceMs: 5, highWaterBytes, deltaRate: { perS: 100_000, burst: 1000 } });
    hub.deltaAck = (_delta, seq) => ({ ack: { ok: true, seq }, delayMs: 15 });
    const s = await a.stream('u1');
    const chunk = 'x'.repeat(1023) + '\n';
    const total = 10 * 1024 * 1024;
    let maxBuffered = 0;
    let maxLag = 0;
    const received = () => hub.stream(s.id).text.length;
    for (let written = 0; written < total; written += chunk.length) {
      await s.write(chunk);
      maxBuffered = Math.max(maxBuffered, s.bufferedBytes);
      maxLag = Math.max(maxLag, written + chunk.length - received());
    }
    await s.end();
    expect(received()).toBe(total);
    expect(hub.stream(s.id).text.endsWith('x\n')).toBe(true);
    // What the writer may hold: the high-water mark plus the write that crossed it.
    expect(maxBuffered).toBeLessThanOrEqual(highWaterBytes + chunk.length);
    // And the hub is never further behind than that plus the deltas in flight on the socket.
    expect(maxLag).toBeLessThanOrEqual(highWaterBytes + chunk.length + 16 * 1024);
    expect(Math.max(...hub.stream(s.id).deltas.map((d) => Buffer.byteLength(d.text)))).toBeLessThanOrEqual(16 * 1024);
  }, 60_000);

  it('cuts long writes at maxDeltaBytes without splitting a character', async () => {
    const a = await agent({ coalesceMs: 0, maxDeltaBytes: 10 });
    const s = await a.stream('u1');
    const text = '🙂é'.repeat(20);
    await s.write(text);
    await s.end();
    const deltas = hub.stream(s.id).deltas.map((d) => d.text);
    expect(deltas.join('')).toBe(text);
    for (const d of deltas) {
      expect(Buffer.byteLength(d)).toBeLessThanOrEqual(10);
      expect(d).not.toMatch(/[\uD800-\uDBFF]$/);
    }
  });

  it('keeps to the delta budget by coalescing more, never by dropping text', async () => {
    const a = await agent({ coalesceMs: 0, deltaRate: { perS: 20, burst: 2 } });
    const s = await a.stream('u1');
    const t0 = Date.now();
    for (let i = 0; i < 40; i++) {
      await s.write(`${i},`);
      await sleep(5);
    }
    await s.end();
    const elapsed = (Date.now() - t0) / 1000;
    const stream = hub.stream(s.id);
    expect(stream.text).toBe(Array.from({ length: 40 }, (_, i) => `${i},`).join(''));
    expect(stream.deltas.length).toBeLessThanOrEqual(2 + Math.ceil(20 * elapsed) + 1);
    expect(stream.deltas.length).toBeLessThan(40);
  });

  it('rejects writes with the code of a refused delta, and still ends the stream', async () => {
    const a = await agent({ coalesceMs: 0, ackEvery: 1 });
    hub.deltaAck = (delta, seq) =>
      delta.text === 'too much'
        ? { ack: { ok: false, error: { code: 'PAYLOAD_TOO_LARGE', message: 'STREAM_MAX_BYTES' } } }
        : { ack: { ok: true, seq } };
    const s = await a.stream('u1');
    await s.write('fine ');
    await s.write('too much');
    await hub.until(() => hub.stream(s.id).deltas.length === 2);
    // A round trip on the same socket: the refusal, sent before its answer, has arrived.
    await a.activity('u1', 'idle');
    const error = await s.write('more').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(RelayAgentError);
    expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', retryable: false });
    await expect(s.end({ status: 'error' })).resolves.toEqual({ id: s.id, ts: expect.any(String) });
    expect(hub.stream(s.id).end).toEqual({ id: s.id, status: 'error' });
  });

  it('turns refused stream:start into a typed error, and refuses "*" without sending', async () => {
    const a = await agent();
    hub.startAck = () => ({ ok: false, error: { code: 'STREAM_LIMIT', message: 'too many' } });
    await expect(a.stream('u1')).rejects.toMatchObject({ code: 'STREAM_LIMIT', retryable: false });
    hub.startAck = () => ({ ok: false, error: { code: 'SERVER_UNAVAILABLE', message: 'redis' } });
    await expect(a.stream('u1')).rejects.toMatchObject({ code: 'SERVER_UNAVAILABLE', retryable: true });
    await expect(a.stream('*')).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    expect(hub.streams.size).toBe(0);
  });

  it('rejects write and end after end with STREAM_ENDED; a second end gets the first result', async () => {
    const a = await agent();
    const s = await a.stream('u1');
    const first = s.end();
    expect(s.end()).toBe(first);
    await first;
    await expect(s.write('late')).rejects.toMatchObject({ code: 'STREAM_ENDED' });
  });

  it('interrupts open streams when the connection drops: the signal aborts and writes reject', async () => {
    const a = await agent({ backoff: { baseMs: 10_000 } });
    const s = await a.stream('u1');
    const dropped = new Promise((resolve) => a.once('disconnect', resolve));
    hub.last.conn.close();
    await dropped;
    expect(s.signal.aborted).toBe(true);
    await expect(s.write('x')).rejects.toMatchObject({ code: 'STREAM_INTERRUPTED' });
    await expect(s.end()).rejects.toMatchObject({ code: 'STREAM_INTERRUPTED' });
  });

  it('sends activity and hands feedback to onFeedback', async () => {
    const a = await agent();
    await a.activity('u1', 'tool', 'searching the docs');
    await a.activity('u1', 'idle');
    expect(hub.activities).toEqual([
      { to: 'u1', state: 'tool', label: 'searching the docs' },
      { to: 'u1', state: 'idle' },
    ]);
    hub.activityAck = () => ({ ok: false, error: { code: 'INVALID_PAYLOAD', message: 'label' } });
    await expect(a.activity('u1', 'tool', 'x'.repeat(200))).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    const feedback = new Promise((resolve) => a.onFeedback(resolve));
    hub.last.emit(Events.feedback, { id: 's9', from: 'u1', rating: 'down', comment: 'wrong' });
    expect(await feedback).toEqual({ id: 's9', from: 'u1', rating: 'down', comment: 'wrong' });
  });
});
