import { Redis } from 'ioredis';
import type { Socket } from 'socket.io-client';
import type { HistoryAck, SendAck } from '../../src/protocol';
import { agentSocket, clientSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { ack } from '../helpers/streams';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';
import { waitFor } from '../helpers/wait';
import { adminToken, createKey } from './rest-client.helper';

/**
 * The storage quota per bot (docs/operations.md, "Storage quotas per bot"): one bot flooding the
 * hub's storage with junk conversations, large replies and open streams fills its own quota and
 * drops its own conversations, and nothing of another bot's goes or is refused; Redis memory stays
 * bounded by the quotas.
 */

const KiB = 1024;
const MiB = 1024 * KiB;
const junk = 'x'.repeat(60 * KiB);

type Ack = SendAck & { id?: string; seq?: number; error?: { code: string } };

async function runtime(url: string, agentId: string): Promise<Socket> {
  return connected(agentSocket(url, { apiKey: TEST_AGENT_KEY, agentId }));
}

async function user(url: string, agentId: string, sub: string): Promise<Socket> {
  return connected(clientSocket(url, { token: mintToken({ sub }), agentId }));
}

/** A victim round trip: the user's message reaches the bot's runtime, whose reply is logged and sent. */
async function roundTrip(userSocket: Socket, bot: Socket, to: string, n: number): Promise<[Ack, Ack]> {
  const sent = await ack<Ack>(userSocket, 'message', { clientMessageId: `m${n}`, text: `question ${n}` });
  const replied = await ack<Ack>(bot, 'reply', { to, text: `answer ${n}` });
  return [sent, replied];
}

/** Runtimes answer client messages with an ack (the hub waits for it before acking the user). */
function acking(bot: Socket): Socket {
  bot.on('message', (_message: unknown, done?: (res: unknown) => void) => done?.({ ok: true }));
  return bot;
}

describe('storage quota per bot: embedded store', () => {
  let h: TestHub;
  afterEach(() => h?.close());

  it("a bot replying to junk clientIds drops its own conversations, never another bot's: history and feedback survive", async () => {
    // The shared bound (8 MiB) is below what the flood writes (18 MiB): before the quota it dropped
    // the least recently used conversation of any bot, the victim's included.
    h = await startHub({ HISTORY_MEMORY_MAX_BYTES: String(8 * MiB) });
    const victim = acking(await runtime(h.url, 'victim'));
    const alice = await user(h.url, 'victim', 'alice');
    const [sent, replied] = await roundTrip(alice, victim, 'alice', 1);
    expect([sent.ok, replied.ok]).toEqual([true, true]);

    const attacker = await runtime(h.url, 'attacker');
    for (let i = 0; i < 300; i += 50) {
      const acks = await Promise.all(
        Array.from({ length: 50 }, (_, j) => ack<Ack>(attacker, 'reply', { to: `junk-${i + j}`, text: junk })),
      );
      expect(acks.filter((a) => !a.ok)).toEqual([]);
    }

    const history = await ack<HistoryAck>(alice, 'history', {});
    expect(history.ok && history.messages.map((m) => m.text)).toEqual(['question 1', 'answer 1']);
    expect(await ack(alice, 'feedback', { id: replied.id, rating: 'up' })).toEqual({ ok: true });
    // The attacker kept its newest conversations within its own quota.
    const kept = await ack<HistoryAck>(await user(h.url, 'attacker', 'junk-299'), 'history', {});
    expect(kept.ok && kept.messages).toHaveLength(1);
  });

  it('counts open streams per bot over its runtime sockets: one more gets QUOTA_EXCEEDED, an ended one frees a place', async () => {
    h = await startHub({ BOT_MAX_OPEN_STREAMS: '3', STREAM_MAX_OPEN: '100' });
    const [a, b] = [await runtime(h.url, 'bot'), await runtime(h.url, 'bot')];
    const start = (socket: Socket, to: string) => ack<Ack>(socket, 'stream:start', { to });
    const first = await start(a, 'u1');
    expect([first.ok, (await start(a, 'u2')).ok, (await start(b, 'u3')).ok]).toEqual([true, true, true]);
    expect(await start(b, 'u4')).toMatchObject({ ok: false, error: { code: 'QUOTA_EXCEEDED' } });
    expect(await start(a, 'u4')).toMatchObject({ ok: false, error: { code: 'QUOTA_EXCEEDED' } });
    // Another bot is not held back.
    expect((await start(await runtime(h.url, 'other'), 'u4')).ok).toBe(true);
    expect(await ack(a, 'stream:end', { id: first.id })).toMatchObject({ ok: true });
    expect((await start(b, 'u4')).ok).toBe(true);
  });

  it('a stream open while its user is deleted writes nothing back: later deltas and its end find no stream', async () => {
    h = await startHub({});
    const bot = await runtime(h.url, 'bot');
    const started = await ack<Ack>(bot, 'stream:start', { to: 'alice' });
    expect(await ack<Ack>(bot, 'stream:delta', { id: started.id, text: 'said before the deletion', ack: true })).toMatchObject({
      ok: true,
    });
    await deleteUser(h.url, 'alice');
    expect(await ack(bot, 'stream:delta', { id: started.id, text: ' and after', ack: true })).toMatchObject({
      ok: false,
      error: { code: 'STREAM_NOT_FOUND' },
    });
    expect(await ack(bot, 'stream:end', { id: started.id })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
    const history = await ack<HistoryAck>(await user(h.url, 'bot', 'alice'), 'history', {});
    expect(history).toEqual({ ok: true, messages: [], hasMore: false });
  });
});

describe('storage quota per bot: Redis with maxmemory noeviction, two replicas', () => {
  let redis: TestRedis;
  let admin: Redis;
  const hubs: TestHub[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
  });
  afterEach(async () => {
    await Promise.all(hubs.splice(0).map((x) => x.close()));
    await admin.flushall();
  });
  afterAll(async () => {
    admin.disconnect();
    await redis.close();
  });

  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
  const replicas = async (overrides: Record<string, string>) => {
    for (let i = 0; i < 2; i++) hubs.push(await startHub({ REDIS_URL: redis.url, ...overrides }));
    return hubs;
  };

  it("a bot flooding replies and streams fills its own quota: Redis stays bounded and the other bot's users keep relaying", async () => {
    // 40 MB is what the flood below would take twice over; noeviction: a full Redis refuses writes.
    await admin.config('SET', 'maxmemory', String(40 * MiB));
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    const [a, b] = await replicas({ BOT_STORAGE_MAX_BYTES: String(4 * MiB), STREAM_MAX_OPEN: '100' });
    const victim = acking(await runtime(a.url, 'victim'));
    const alice = await user(b.url, 'victim', 'alice');
    const before = await usedMemory();

    const attackers = [await runtime(a.url, 'attacker'), await runtime(b.url, 'attacker')];
    const refused: Record<string, number> = {};
    const count = (x: Ack) => {
      if (!x.ok) refused[x.error.code] = (refused[x.error.code] ?? 0) + 1;
    };
    const victimAcks: Ack[] = [];
    for (let round = 0; round < 10; round++) {
      // 2 × 30 replies of 60 KiB to fresh clientIds, and 2 × 10 streams of 4 × 60 KiB each, per round.
      const flood = attackers.flatMap((socket, s) => [
        ...Array.from({ length: 30 }, (_, i) => ack<Ack>(socket, 'reply', { to: `junk-${round}-${s}-${i}`, text: junk }).then(count)),
        ...Array.from({ length: 10 }, async (_, i) => {
          const started = await ack<Ack>(socket, 'stream:start', { to: `streamed-${round}-${s}-${i}` });
          count(started);
          if (!started.ok) return;
          for (let d = 0; d < 4; d++) count(await ack<Ack>(socket, 'stream:delta', { id: started.id, text: junk, ack: true }));
        }),
      ]);
      victimAcks.push(...(await roundTrip(alice, victim, 'alice', round)));
      await Promise.all(flood);
    }
    const grown = (await usedMemory()) - before;

    expect(victimAcks.filter((x) => !x.ok)).toEqual([]);
    const history = await ack<HistoryAck>(alice, 'history', { limit: 50 });
    expect(history.ok && history.messages).toHaveLength(20);
    // The attacker was refused only for its own quota, never for a full Redis.
    expect(Object.keys(refused).filter((code) => code !== 'QUOTA_EXCEEDED')).toEqual([]);
    expect(refused.QUOTA_EXCEEDED).toBeGreaterThan(0);
    // What one bot may hold (4 MiB), up to twice over in Redis's allocations (a string grown by APPEND
    // is given twice its length), with the victim's few KiB and the clients' buffers.
    expect(grown).toBeLessThan(2 * 4 * MiB + 2 * MiB);
    // The users' indexes of conversations (another slot each) lose the conversations the quota dropped.
    const kept = await admin.zcard('relay:{attacker}:quota:convs');
    expect(kept).toBeLessThan(100);
    await waitFor(
      async () => (await admin.keys('relay:{user:*}:conversations')).length <= kept + 1,
      10_000,
      "the dropped conversations out of their users' indexes",
    );
    console.log(`Redis used_memory grew ${(grown / MiB).toFixed(1)} MiB under the flood (quota 4 MiB); refused ${JSON.stringify(refused)}`);
  }, 120_000);

  it('counts open streams per bot over two replicas', async () => {
    const [a, b] = await replicas({ BOT_MAX_OPEN_STREAMS: '2' });
    const [ra, rb] = [await runtime(a.url, 'bot'), await runtime(b.url, 'bot')];
    const first = await ack<Ack>(ra, 'stream:start', { to: 'u1' });
    expect(first.ok).toBe(true);
    expect(await ack<Ack>(rb, 'stream:start', { to: 'u2' })).toMatchObject({ ok: true });
    expect(await ack(rb, 'stream:start', { to: 'u3' })).toMatchObject({ ok: false, error: { code: 'QUOTA_EXCEEDED' } });
    expect(await ack(ra, 'stream:start', { to: 'u3' })).toMatchObject({ ok: false, error: { code: 'QUOTA_EXCEEDED' } });
    expect(await ack(ra, 'stream:end', { id: first.id })).toMatchObject({ ok: true });
    expect(await ack(rb, 'stream:start', { to: 'u3' })).toMatchObject({ ok: true });
  });

  it('a stream open on one replica while its user is deleted on the other writes nothing back', async () => {
    const [a, b] = await replicas({});
    const bot = await runtime(a.url, 'bot');
    const started = await ack<Ack>(bot, 'stream:start', { to: 'alice' });
    await ack(bot, 'stream:delta', { id: started.id, text: 'said before the deletion', ack: true });
    await deleteUser(b.url, 'alice');
    expect(await ack(bot, 'stream:delta', { id: started.id, text: ' and after', ack: true })).toMatchObject({
      ok: false,
      error: { code: 'STREAM_NOT_FOUND' },
    });
    expect(await ack(bot, 'stream:end', { id: started.id })).toMatchObject({ ok: false, error: { code: 'STREAM_NOT_FOUND' } });
    expect(await admin.keys('*alice*')).toEqual([]);
  });

  it('a REST publish past the quota is a problem+json QUOTA_EXCEEDED (507), and nothing is logged', async () => {
    const [a] = await replicas({ BOT_STORAGE_MAX_BYTES: String(256 * KiB) });
    const bot = await runtime(a.url, 'bot');
    // Open streams hold the quota: nothing can be dropped to make room for a reply.
    for (let i = 0; i < 4; i++) {
      const started = await ack<Ack>(bot, 'stream:start', { to: `s${i}` });
      await ack(bot, 'stream:delta', { id: started.id, text: junk, ack: true });
    }
    expect(await ack(bot, 'reply', { to: 'bob', text: junk })).toMatchObject({ ok: false, error: { code: 'QUOTA_EXCEEDED' } });
    const res = await fetch(`${a.url}/agents/bot/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': await createKey(a.url, ['messages:publish']) },
      body: JSON.stringify({ to: 'bob', text: junk }),
    });
    expect(res.status).toBe(507);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ status: 507, code: 'QUOTA_EXCEEDED' });
    expect(await admin.keys('*:log:bob')).toEqual([]);
  });
});

/** DELETE /users/{id} as an ADMIN. */
async function deleteUser(url: string, id: string): Promise<void> {
  const res = await fetch(`${url}/users/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${adminToken()}` } });
  // 404: no user record, its conversations erased all the same.
  expect([200, 404]).toContain(res.status);
}
