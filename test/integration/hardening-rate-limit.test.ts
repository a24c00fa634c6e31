import type { Socket } from 'socket.io-client';
import { Events, SessionClosedCodes, type SendAck } from '../../src/protocol';
import { TokenBucket } from '../../src/limits/token-bucket';
import type { RelayAgent } from '../../src/sdk/agent';
import { agentSocket, connected, nextEvent, startHub, type TestHub } from '../helpers/hub';
import { TEST_AGENT_KEY } from '../helpers/tokens';

const RATE = 2;
const BURST = 10;
const FLOOD = 200;

let seq = 0;
const message = (text = 'hi') => ({ clientMessageId: `m-${++seq}`, text });

/** Everything one socket saw, in order, until it was disconnected. */
interface Trace {
  acks: SendAck[];
  closed?: { code: string; retryable: boolean };
  ackedBeforeClose: number;
  reason: string;
}

/** Sends FLOOD messages back to back and resolves once the hub has cut the socket off. */
function flood(socket: Socket, withAcks: boolean): Promise<Trace> {
  const trace: Trace = { acks: [], ackedBeforeClose: 0, reason: '' };
  socket.once(Events.sessionClosed, (payload) => {
    trace.closed = payload;
    trace.ackedBeforeClose = trace.acks.length;
  });
  const done = new Promise<Trace>((resolve) =>
    socket.once('disconnect', (reason) => {
      trace.reason = reason;
      resolve(trace);
    }),
  );
  for (let i = 0; i < FLOOD; i++) {
    if (withAcks) socket.emit(Events.message, message('flood'), (ack: SendAck) => trace.acks.push(ack));
    else socket.emit(Events.message, message('flood'));
  }
  return done;
}

describe('per-socket message rate limit', () => {
  let t: TestHub;
  let agent: RelayAgent;
  const fromClient = new Map<string, number>();

  beforeAll(async () => {
    t = await startHub({ MESSAGE_RATE_PER_S: String(RATE), MESSAGE_RATE_BURST: String(BURST) });
    agent = await t.agent('bot');
    agent.onMessage(async (m) => {
      fromClient.set(m.from, (fromClient.get(m.from) ?? 0) + 1);
      await agent.reply(m.from, `echo:${m.text}`);
    });
  });
  afterAll(() => t.close());

  /** One full round trip for `socket`: ok ack, then the agent's echo. */
  async function roundTrip(socket: Socket, text: string): Promise<void> {
    const echo = new Promise<{ text: string }>((resolve) => {
      const onMessage = (m: { text: string }) => {
        if (m.text !== `echo:${text}`) return; // other tabs of the same user get their echoes too
        socket.off(Events.message, onMessage);
        resolve(m);
      };
      socket.on(Events.message, onMessage);
    });
    const ack: SendAck = await socket.timeout(5000).emitWithAck(Events.message, message(text));
    expect(ack).toEqual({ ok: true, id: expect.any(String), ts: expect.any(String) });
    expect((await echo).text).toBe(`echo:${text}`);
  }

  it('limits a flooding socket with RATE_LIMITED acks, then closes its session, while other clients keep relaying', async () => {
    const flooder = await t.client('bot', { sub: 'flooder' });
    const others = await Promise.all(['alice', 'bob', 'carol'].map((sub) => t.client('bot', { sub })));

    const flooded = flood(flooder, true);
    // The others talk while the flood is being processed, each within its own budget.
    await Promise.all(
      others.map(async (s, i) => {
        for (let n = 0; n < 3; n++) await roundTrip(s, `other-${i}-${n}`);
      }),
    );
    const trace = await flooded;

    const limited = trace.acks.filter((a) => !a.ok && a.error.code === 'RATE_LIMITED');
    expect(limited.length).toBeGreaterThanOrEqual(1);
    expect(limited[0]).toEqual({ ok: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } });
    expect(trace.closed).toEqual({ code: 'RATE_LIMITED', retryable: SessionClosedCodes.RATE_LIMITED.retryable });
    expect(trace.reason).toBe('io server disconnect');
    // Only the bucket's worth (plus what refilled meanwhile) reached the agent, not the flood.
    expect(fromClient.get('flooder') ?? 0).toBeLessThan(FLOOD / 4);

    for (const s of others) {
      expect(s.connected).toBe(true);
      await roundTrip(s, 'after the flood');
    }
    const acks = await t.hub.metrics.acks.get();
    const counted = acks.values.find((v) => v.labels.event === Events.message && v.labels.result === 'RATE_LIMITED')?.value;
    expect(counted).toBeGreaterThanOrEqual(limited.length);
  });

  it('cuts off a flood sent without ack callbacks the same way', async () => {
    const flooder = await t.client('bot', { sub: 'silent-flooder' });
    const trace = await flood(flooder, false);
    expect(trace.closed?.code).toBe('RATE_LIMITED');
    expect(trace.reason).toBe('io server disconnect');
  });

  it('answers a short burst over the limit with RATE_LIMITED but keeps the socket', async () => {
    const socket = await t.client('bot', { sub: 'bursty' });
    const acks: SendAck[] = await Promise.all(
      Array.from({ length: BURST + 3 }, () => socket.timeout(5000).emitWithAck(Events.message, message('burst'))),
    );
    expect(acks.filter((a) => !a.ok && a.error.code === 'RATE_LIMITED').length).toBeGreaterThanOrEqual(1);
    expect(acks.filter((a) => a.ok).length).toBeGreaterThanOrEqual(BURST);
    expect(socket.connected).toBe(true);
    expect(t.hub.relay.namespaces.client.sockets.size).toBeGreaterThanOrEqual(1);
  });

  it('keys the limit on the socket: another tab of the same user is not affected', async () => {
    const tab1 = await t.client('bot', { sub: 'two-tabs' });
    const tab2 = await t.client('bot', { sub: 'two-tabs' });
    await flood(tab1, true);
    expect(tab2.connected).toBe(true);
    await roundTrip(tab2, 'from the quiet tab');
  });
});

describe('agent runtime rate limit', () => {
  it('disconnects a runtime that keeps replying while limited, and only that runtime', async () => {
    const t = await startHub({ AGENT_MESSAGE_RATE_PER_S: '1', AGENT_MESSAGE_RATE_BURST: '5', MESSAGE_RATE_PER_S: '0' });
    try {
      const noisy = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'noisy-bot' });
      await connected(noisy);
      const calm = await t.agent('calm-bot');
      let replied: Promise<unknown> = Promise.resolve();
      calm.onMessage((m) => {
        replied = calm.reply(m.from, 'calm');
      });
      const client = await t.client('calm-bot', { sub: 'u' });

      const acks: SendAck[] = [];
      const gone = new Promise<string>((resolve) => noisy.once('disconnect', resolve));
      for (let i = 0; i < 100; i++) noisy.emit(Events.reply, { to: '*', text: 'spam' }, (a: SendAck) => acks.push(a));
      expect(await gone).toBe('io server disconnect');
      expect(acks.some((a) => !a.ok && a.error.code === 'RATE_LIMITED')).toBe(true);

      const reply = nextEvent<{ text: string }>(client, Events.message);
      expect((await client.timeout(5000).emitWithAck(Events.message, message())).ok).toBe(true);
      expect((await reply).text).toBe('calm');
      await replied;
    } finally {
      await t.close();
    }
  });
});

describe('TokenBucket', () => {
  it('refills at the rate up to the burst, and counts refusals in a row', () => {
    const bucket = new TokenBucket(2, 3);
    const t0 = Date.now();
    expect([bucket.take(t0), bucket.take(t0), bucket.take(t0), bucket.take(t0), bucket.take(t0)]).toEqual([true, true, true, false, false]);
    expect(bucket.strikes).toBe(2);
    expect(bucket.take(t0 + 500)).toBe(true); // one token after half a second at 2/s
    expect(bucket.strikes).toBe(0);
    expect(bucket.take(t0 + 500)).toBe(false);
    expect([bucket.take(t0 + 60_000), bucket.take(t0 + 60_000), bucket.take(t0 + 60_000), bucket.take(t0 + 60_000)]).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });

  it('never limits with a rate of 0', () => {
    const bucket = new TokenBucket(0, 1);
    expect(Array.from({ length: 1000 }, () => bucket.take()).every(Boolean)).toBe(true);
  });
});
