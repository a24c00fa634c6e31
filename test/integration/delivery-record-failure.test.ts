import Redis from 'ioredis';
import type { Socket } from 'socket.io-client';
import type { SendAck } from '../../src/protocol';
import { waitFor } from '../helpers/wait';
import { agentSocket, connected, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { TEST_AGENT_KEY } from '../helpers/tokens';

/**
 * Issue 10: recording a delivery (dedupe markDelivered) happens after the runtime acked. If that
 * write fails, the message was still delivered: the client must get ok, not an error that makes it
 * resend (and the user see a failure) for a message the bot has.
 */
describe('a delivery whose record cannot be written', () => {
  let redis: TestRedis;
  let admin: Redis;
  /** The replica that holds the runtime, and another that holds only clients. */
  let runtimes: TestHub;
  let clients: TestHub;
  let runtime: Socket;
  beforeAll(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    runtimes = await startHub({ REDIS_URL: redis.url });
    clients = await startHub({ REDIS_URL: redis.url });
    runtime = agentSocket(runtimes.url, { apiKey: TEST_AGENT_KEY, agentId: 'bot' });
    await connected(runtime);
  });
  afterAll(async () => {
    runtime?.disconnect();
    await admin?.call('CLIENT', 'UNPAUSE');
    await admin?.config('SET', 'maxmemory', '0');
    admin?.disconnect();
    await clients?.close();
    await runtimes?.close();
    await redis?.close();
  });

  it("with the runtime on the client's replica: acked ok, the failure counted; a retry keeps the same id", async () => {
    const received: string[] = [];
    runtime.removeAllListeners('message');
    // The runtime has the message; only then is Redis held for writes, past the hub's command
    // timeout (2 s), so the markDelivered that follows the ack fails.
    runtime.on('message', (message: { id: string }, ack: (r: { ok: boolean }) => void) => {
      received.push(message.id);
      if (received.length === 1) {
        void admin.call('CLIENT', 'PAUSE', '3000', 'WRITE').then(() => ack({ ok: true }));
      } else {
        ack({ ok: true });
      }
    });
    const errorsBefore = await dedupeErrors(runtimes);
    const client = await runtimes.client('bot', { sub: 'ann' });
    const payload = { clientMessageId: 'c1', text: 'hello' };
    const ack = (await client.timeout(10_000).emitWithAck('message', payload)) as SendAck;
    expect(ack).toEqual({ ok: true, id: received[0], ts: expect.any(String) });
    // The ack does not wait for the record; its failure is counted when the write times out.
    await waitFor(async () => (await dedupeErrors(runtimes)) === errorsBefore + 1, 10_000, 'the failed record counted');

    await admin.call('CLIENT', 'UNPAUSE');
    const retry = (await client.timeout(10_000).emitWithAck('message', payload)) as SendAck;
    // The timed-out write may still have run when the pause ended (Redis queued it); either way a
    // retry gets the same id and ts, and the runtime never sees another id for this message.
    expect(retry).toEqual(ack);
    expect(new Set(received)).toEqual(new Set([received[0]]));
  });

  it('with the runtime on another replica: acked ok, the failure counted where the mark is sent; a retry keeps the same id', async () => {
    const received: string[] = [];
    runtime.removeAllListeners('message');
    // Redis refuses writes (out of memory, noeviction) once the runtime has the second message: the
    // delivered mark that goes ahead of the ack fails, the ack's publish does not. (The first makes
    // the conversation, so the second's intake writes nothing after the hand-off.)
    runtime.on('message', (message: { id: string }, ack: (r: { ok: boolean }) => void) => {
      received.push(message.id);
      if (received.length === 2) void admin.config('SET', 'maxmemory', '1').then(() => ack({ ok: true }));
      else ack({ ok: true });
    });
    const client = await clients.client('bot', { sub: 'bea' });
    expect(await client.timeout(10_000).emitWithAck('message', { clientMessageId: 'c0', text: 'hi' })).toMatchObject({ ok: true });
    const errorsBefore = await dedupeErrors(runtimes);
    const payload = { clientMessageId: 'c1', text: 'hello' };
    const ack = (await client.timeout(10_000).emitWithAck('message', payload)) as SendAck;
    expect(ack).toEqual({ ok: true, id: received[1], ts: expect.any(String) });
    await waitFor(async () => (await dedupeErrors(runtimes)) === errorsBefore + 1, 10_000, 'the failed mark counted');

    // Not marked: a retry is delivered again, with the same id (the agent SDK drops it).
    await admin.config('SET', 'maxmemory', '0');
    const retry = (await client.timeout(10_000).emitWithAck('message', payload)) as SendAck;
    expect(retry).toEqual(ack);
    expect(received.slice(1)).toEqual([ack.ok && ack.id, ack.ok && ack.id]);
  });
});

async function dedupeErrors(t: TestHub): Promise<number> {
  return (await t.hub.metrics.redisErrors.get()).values.find((v) => v.labels.component === 'dedupe')?.value ?? 0;
}
