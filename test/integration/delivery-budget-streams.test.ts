import type { Socket } from 'socket.io-client';
import { AckCodes, Events, type ClientInboundMessage, type OkAck, type SendAck, type StreamDeltaAck } from '../../src/protocol';
import { agentSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { TEST_AGENT_KEY } from '../helpers/tokens';
import { sleep, waitFor } from '../helpers/wait';

// One user of the flooding bot holds this many sockets: every activity or delta to them costs this many deliveries.
const SOCKETS = 100;
const DELIVERY_RATE = 2000;
const DELIVERY_BURST = 1000;
const WINDOW_MS = 3000;
const STREAMS = 10;

let t: TestHub;
beforeAll(async () => {
  t = await startHub({
    MAX_CONNECTIONS_PER_IP: '0',
    AGENT_DELIVERY_RATE_PER_S: String(DELIVERY_RATE),
    AGENT_DELIVERY_RATE_BURST: String(DELIVERY_BURST),
  });
});
afterAll(() => t.close());

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** One victim round trip (message → the bot's echo) per 100 ms for `ms`; sorted times. */
async function roundTrips(victim: Socket, ms: number): Promise<number[]> {
  const times: number[] = [];
  const end = Date.now() + ms;
  let n = 0;
  while (Date.now() < end) {
    const text = `rt-${Date.now()}-${++n}`;
    const started = performance.now();
    const echoed = new Promise<void>((resolve) => {
      const onMessage = (m: ClientInboundMessage) => {
        if (m.text !== `echo:${text}`) return;
        victim.off(Events.message, onMessage);
        resolve();
      };
      victim.on(Events.message, onMessage);
    });
    victim.emit(Events.message, { clientMessageId: text, text });
    await Promise.race([echoed, sleep(5000)]);
    times.push(performance.now() - started);
    await sleep(Math.max(0, 100 - (performance.now() - started)));
  }
  return times.sort((a, b) => a - b);
}

describe('activity and stream deltas spend the per-bot delivery budget (AGENT_DELIVERY_RATE_*)', () => {
  it("throttles one runtime's activity and delta flood to a many-socket user; another bot's user stays served", async () => {
    const victimBot = await t.agent('victim-bot');
    victimBot.onMessage(async (m) => {
      await victimBot.reply(m.from, `echo:${m.text}`);
    });
    const victim = await t.client('victim-bot', { sub: 'victim' });
    const flooded: Socket[] = [];
    for (let i = 0; i < SOCKETS; i += 50) {
      flooded.push(...(await Promise.all(Array.from({ length: 50 }, () => t.client('flood-bot', { sub: 'junk-user' })))));
    }
    const clientId = 'junk-user';
    let received = 0;
    for (const socket of flooded) {
      socket.on(Events.agentActivity, () => received++);
      socket.on(Events.messageDelta, () => received++);
    }

    const runtime = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'flood-bot' });
    await connected(runtime);
    const ids: string[] = [];
    for (let i = 0; i < STREAMS; i++) {
      const ack: SendAck = await runtime.timeout(5000).emitWithAck(Events.streamStart, { to: clientId });
      if (!ack.ok) throw new Error(`stream:start refused: ${ack.error.code}`);
      ids.push(ack.id);
    }
    // Starts cost deliveries too: let the bucket fill again before the measured window.
    await sleep((STREAMS * SOCKETS * 1000) / DELIVERY_RATE + 100);
    received = 0;

    const activityAcks: OkAck[] = [];
    const deltaAcks: StreamDeltaAck[] = [];
    const started = Date.now();
    // The hub may still be working through the flood after the window: the budget's refill runs
    // until it answers the last event, so the bound counts up to the last ack received.
    let lastAckAt = started;
    let deltasSent = 0;
    let sent = 0;
    // 400 activities and 190 deltas a second: under the runtime socket's own buckets
    // (AGENT_MESSAGE_RATE_PER_S 2,000, STREAM_DELTA_RATE_PER_S 200), so only the bot's budget holds them.
    const flood = setInterval(() => {
      for (const due = ((Date.now() - started) / 1000) * 400; sent < due; sent++) {
        runtime.emit(Events.activity, { to: clientId, state: 'thinking' }, (ack: OkAck) => {
          activityAcks.push(ack);
          lastAckAt = Date.now();
        });
        if (sent % 2 === 0 && sent % 40 !== 0) {
          deltasSent++;
          runtime.emit(Events.streamDelta, { id: ids[sent % STREAMS], text: 'x' }, (ack: StreamDeltaAck) => {
            deltaAcks.push(ack);
            lastAckAt = Date.now();
          });
        }
      }
    }, 10);
    let loaded: number[];
    try {
      loaded = await roundTrips(victim, WINDOW_MS);
    } finally {
      clearInterval(flood);
    }
    await waitFor(() => activityAcks.length === sent && deltaAcks.length === deltasSent, 10_000, 'every flooded event answered');
    const seconds = (lastAckAt - started) / 1000;
    // Deliveries of the last accepted events may still be on their way to the sockets.
    await sleep(500);
    const acceptedActivities = activityAcks.filter((a) => a.ok).length;
    const acceptedDeltas = deltaAcks.filter((a) => a.ok).length;
    const limited = [...activityAcks, ...deltaAcks].filter((a) => !a.ok && a.error.code === 'RATE_LIMITED').length;
    console.log(
      `flood: ${activityAcks.length} activities (${acceptedActivities} accepted), ${deltaAcks.length} deltas (${acceptedDeltas} accepted), ` +
        `${limited} RATE_LIMITED in ${seconds.toFixed(1)} s; ${(received / seconds).toFixed(0)} deliveries/s received by the ${SOCKETS} sockets; ` +
        `victim p50 ${percentile(loaded, 50).toFixed(1)} / p99 ${percentile(loaded, 99).toFixed(1)} ms`,
    );
    // The budget in deliveries: its burst and what refilled, plus one event's cost taken into debt.
    const bound = DELIVERY_BURST + DELIVERY_RATE * seconds + SOCKETS;
    expect((acceptedActivities + acceptedDeltas) * SOCKETS).toBeLessThanOrEqual(bound);
    expect(received).toBeLessThanOrEqual(bound);
    expect(limited).toBeGreaterThan(0);
    // Before the budget covered them the victim's p50 was 7.6 s here; with it 26–850 ms, the top of
    // that with the 2-core machine at a load average of 22. Generous, so a loaded machine passes.
    expect(percentile(loaded, 50)).toBeLessThan(2500);
    runtime.disconnect();
  }, 120_000);

  it('refuses a stream:start and keeps refusing deltas of a stream once one was refused (its text stays a prefix)', async () => {
    const h = await startHub({ AGENT_DELIVERY_RATE_PER_S: '1', AGENT_DELIVERY_RATE_BURST: '2' });
    try {
      const client = await h.client('tiny-bot', { sub: 'u' });
      const runtime = agentSocket(h.url, { apiKey: TEST_AGENT_KEY, agentId: 'tiny-bot' });
      await connected(runtime);
      const start: SendAck = await runtime.timeout(5000).emitWithAck(Events.streamStart, { to: 'u' });
      expect(start.ok).toBe(true);
      const id = start.ok ? start.id : '';
      const deltas: StreamDeltaAck[] = [];
      for (const text of ['a', 'b', 'c']) deltas.push(await runtime.timeout(5000).emitWithAck(Events.streamDelta, { id, text }));
      expect(deltas.map((d) => d.ok)).toEqual([true, false, false]);
      expect(deltas[1]).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });
      expect(AckCodes.RATE_LIMITED.retryable).toBe(true);
      const second: SendAck = await runtime.timeout(5000).emitWithAck(Events.streamStart, { to: 'u' });
      expect(second).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });
      const activity: OkAck = await runtime.timeout(5000).emitWithAck(Events.activity, { to: 'u', state: 'typing' });
      expect(activity).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });
      // The end always goes (charged, not refused), with the text the stream kept.
      const ended = nextMessageEnd(client);
      const end: SendAck = await runtime.timeout(5000).emitWithAck(Events.streamEnd, { id });
      expect(end.ok).toBe(true);
      expect((await ended).text).toBe('a');
      runtime.disconnect();
    } finally {
      await h.close();
    }
  });
});

describe('feedback and stop spend the user budget (USER_MESSAGE_RATE_*)', () => {
  it('answers RATE_LIMITED (retryable) to a user flooding feedback and stop from many sockets', async () => {
    const h = await startHub({
      USER_MESSAGE_RATE_PER_S: '5',
      USER_MESSAGE_RATE_BURST: '10',
      MESSAGE_RATE_PER_S: '1000',
      MESSAGE_RATE_BURST: '1000',
    });
    try {
      const bot = await h.agent('rated-bot');
      const sockets = await Promise.all(Array.from({ length: 5 }, () => h.client('rated-bot', { sub: 'rater' })));
      const { id } = await bot.reply('rater', 'rate me');
      const acks: OkAck[] = await Promise.all(
        sockets.flatMap((socket) =>
          Array.from({ length: 10 }, (_, i) =>
            i % 2 === 0
              ? socket.timeout(5000).emitWithAck(Events.feedback, { id, rating: 'up', comment: 'x'.repeat(1000) })
              : socket.timeout(5000).emitWithAck(Events.stop, { id }),
          ),
        ),
      );
      const limited = acks.filter((a) => !a.ok && a.error.code === 'RATE_LIMITED');
      expect(limited.length).toBeGreaterThanOrEqual(acks.length - 12);
      expect(limited[0]).toMatchObject({ error: { message: expect.stringContaining('USER_MESSAGE_RATE_PER_S') } });
      // Another user of the same bot is not held back by it.
      const other = await h.client('rated-bot', { sub: 'someone-else' });
      const { id: theirs } = await bot.reply('someone-else', 'rate me too');
      expect(await other.timeout(5000).emitWithAck(Events.feedback, { id: theirs, rating: 'down' })).toEqual({ ok: true });
    } finally {
      await h.close();
    }
  });
});

function nextMessageEnd(socket: Socket): Promise<{ text: string }> {
  return new Promise((resolve) => socket.once(Events.messageEnd, resolve));
}
