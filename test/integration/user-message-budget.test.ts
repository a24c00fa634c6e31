import type { Socket } from 'socket.io-client';
import { Events, type HistoryAck, type SendAck } from '../../src/protocol';
import type { RelayAgent } from '../../src/sdk/agent';
import { startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { sleep } from '../helpers/wait';

// The defaults: a user's budget is twice one socket's.
const USER_RATE = 40;
const USER_BURST = 80;
const SOCKET_RATE = 20;
const SOCKETS = 25;
const ROUNDS = 60; // three seconds at the per-socket rate

let seq = 0;

/** What one user's sockets got back while each sent at its own rate limit. */
interface Outcome {
  accepted: number;
  refused: SendAck[];
  seconds: number;
}

/**
 * Every socket sends one message per 1/SOCKET_RATE s, as fast as its own limit allows, for ROUNDS
 * rounds; resolves once every ack is in.
 */
async function sendAtSocketRate(sockets: Socket[]): Promise<Outcome> {
  const acks: Promise<SendAck>[] = [];
  const started = Date.now();
  for (let round = 0; round < ROUNDS; round++) {
    for (const socket of sockets) {
      acks.push(socket.timeout(10_000).emitWithAck(Events.message, { clientMessageId: `b-${++seq}`, text: 'paid call' }));
    }
    // Paced against the start, so slow rounds do not stretch the window (nor bunch up the sends).
    const next = started + ((round + 1) * 1000) / SOCKET_RATE;
    await sleep(Math.max(0, next - Date.now()));
  }
  const results = await Promise.all(acks);
  const seconds = (Date.now() - started) / 1000;
  return { accepted: results.filter((a) => a.ok).length, refused: results.filter((a) => !a.ok), seconds };
}

/** Counts the bot's client messages per sender, acking each (the SDK does). */
function countArrivals(agent: RelayAgent): Map<string, number> {
  const arrivals = new Map<string, number>();
  agent.onMessage((m) => {
    arrivals.set(m.from, (arrivals.get(m.from) ?? 0) + 1);
  });
  return arrivals;
}

/** The user messages in `socket`'s conversation, paging back through its history. */
async function loggedUserMessages(socket: Socket): Promise<number> {
  let count = 0;
  let before: string | undefined;
  for (;;) {
    const page: HistoryAck = await socket.timeout(5000).emitWithAck(Events.history, { limit: 100, ...(before ? { before } : {}) });
    if (!page.ok) throw new Error(`history refused: ${page.error.code}`);
    count += page.messages.filter((m) => m.author === 'user').length;
    if (!page.hasMore) return count;
    before = page.messages[0].id;
  }
}

function expectWithinBudget(outcome: Outcome, label: string): void {
  const perSecond = outcome.accepted / outcome.seconds;
  console.log(
    `${label}: ${SOCKETS} sockets of one sub sent ${SOCKETS * ROUNDS} messages in ${outcome.seconds.toFixed(2)} s; ` +
      `accepted ${outcome.accepted} (${perSecond.toFixed(0)}/s), refused ${outcome.refused.length}`,
  );
  // The bucket's burst plus what it refilled over the window, with a margin for timer jitter.
  expect(outcome.accepted).toBeLessThanOrEqual(USER_BURST + USER_RATE * outcome.seconds * 1.1);
  // Not stricter than the budget either: most of it was used.
  expect(outcome.accepted).toBeGreaterThanOrEqual(USER_RATE * outcome.seconds * 0.8);
  for (const ack of outcome.refused) expect(ack).toEqual({ ok: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } });
}

describe('per-user message budget (USER_MESSAGE_RATE_*), one replica', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ HISTORY_MAX_MESSAGES: '2000' });
  });
  afterAll(() => t.close());

  it("holds a user's sockets together to the user's budget; refused messages are neither delivered nor logged", async () => {
    const arrivals = countArrivals(await t.agent('paid-bot'));
    const sockets = await Promise.all(Array.from({ length: SOCKETS }, () => t.client('paid-bot', { sub: 'greedy' })));
    const quiet = await t.client('paid-bot', { sub: 'quiet' });

    const outcome = sendAtSocketRate(sockets);
    // Another user of the same bot is not held back by the greedy one.
    const quietAck: SendAck = await quiet.timeout(5000).emitWithAck(Events.message, { clientMessageId: 'q1', text: 'hello' });
    expect(quietAck.ok).toBe(true);
    const result = await outcome;

    expectWithinBudget(result, 'one replica');
    expect(arrivals.get('greedy')).toBe(result.accepted);
    expect(await loggedUserMessages(sockets[0])).toBe(result.accepted);
    const limited = (await t.hub.metrics.rateLimited.get()).values.find((v) => v.labels.scope === 'user')?.value;
    expect(limited).toBe(result.refused.length);
  });
});

describe('per-user message budget, two replicas over Redis', () => {
  let redis: TestRedis;
  let a: TestHub;
  let b: TestHub;
  beforeAll(async () => {
    redis = await startRedis();
    a = await startHub({ REDIS_URL: redis.url, HISTORY_MAX_MESSAGES: '2000' });
    b = await startHub({ REDIS_URL: redis.url, HISTORY_MAX_MESSAGES: '2000' });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await redis.close();
  });

  it('spends one budget for a user whose sockets are split across the replicas', async () => {
    const arrivals = countArrivals(await a.agent('paid-bot'));
    const sockets = await Promise.all(
      Array.from({ length: SOCKETS }, (_, i) => (i % 2 === 0 ? a : b).client('paid-bot', { sub: 'greedy' })),
    );
    const result = await sendAtSocketRate(sockets);

    expectWithinBudget(result, 'two replicas');
    expect(arrivals.get('greedy')).toBe(result.accepted);
    expect(await loggedUserMessages(sockets[1])).toBe(result.accepted);
  });
});
