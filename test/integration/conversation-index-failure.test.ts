import Redis from 'ioredis';
import type { Socket } from 'socket.io-client';
import type { SendAck } from '../../src/protocol';
import { agentSocket, connected, nextEvent, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { TEST_AGENT_KEY } from '../helpers/tokens';

/**
 * After a message is appended to its conversation (and, in the same script, handed to its runtime
 * or published to other replicas), the hub adds the conversation to its user's index, which
 * deleteUser reads. The message is logged and on its way by then: when that index write fails, the
 * sender must still get ok (an error would make it resend a message that arrived), the failure
 * must be counted, and the next message of the conversation must index it.
 */
describe('a conversation whose user index cannot be written', () => {
  let redis: TestRedis;
  let admin: Redis;
  let t: TestHub;
  let runtime: Socket;
  beforeAll(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
    t = await startHub({ REDIS_URL: redis.url });
    runtime = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'bot' });
    runtime.on('message', (_message: unknown, ack: (r: { ok: boolean }) => void) => ack({ ok: true }));
    await connected(runtime);
  });
  afterAll(async () => {
    runtime?.disconnect();
    await admin?.call('ACL', 'SETUSER', 'default', '+sadd');
    admin?.disconnect();
    await t?.close();
    await redis?.close();
  });

  it('acks the message and the reply ok, delivers both, counts the failures, and indexes the conversation at its next message', async () => {
    const indexed = () => admin.smembers('relay:{user:ann}:conversations');
    const errorsBefore = await indexErrors(t);
    // The hub's connection may not add to any set: the index write fails, nothing else does.
    await admin.call('ACL', 'SETUSER', 'default', '-sadd');

    const client = await t.client('bot', { sub: 'ann' });
    const ack = (await client.timeout(5000).emitWithAck('message', { clientMessageId: 'c1', text: 'hello' })) as SendAck;
    expect(ack).toMatchObject({ ok: true });
    const reply = nextEvent<{ text: string }>(client, 'message');
    const replied = (await runtime.timeout(5000).emitWithAck('reply', { to: 'ann', text: 'hi ann' })) as SendAck;
    expect(replied).toMatchObject({ ok: true });
    expect((await reply).text).toBe('hi ann');
    expect(await indexErrors(t)).toBe(errorsBefore + 2);
    expect(await indexed()).toEqual([]);

    await admin.call('ACL', 'SETUSER', 'default', '+sadd');
    expect(await client.timeout(5000).emitWithAck('message', { clientMessageId: 'c2', text: 'again' })).toMatchObject({ ok: true });
    expect(await indexed()).toEqual(['bot']);
    expect(await t.hub.store.log.deleteUser('ann')).toBe(1);
  });
  it("lets deleteUser erase a conversation its index missed, and no other user's whose id it is a suffix or glob of", async () => {
    const eu = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'bot:eu' });
    eu.on('message', (_message: unknown, ack: (r: { ok: boolean }) => void) => ack({ ok: true }));
    await connected(eu);
    const log = `relay:{bot:eu}:log:`;
    // Users whose conversation keys a careless pattern would also match.
    for (const sub of ['x}:log:b*b', 'b?b', 'bob']) {
      const other = await t.client('bot:eu', { sub });
      expect(await other.timeout(5000).emitWithAck('message', { clientMessageId: 'o1', text: 'keep me' })).toMatchObject({ ok: true });
      other.disconnect();
    }
    await admin.call('ACL', 'SETUSER', 'default', '-sadd');
    const client = await t.client('bot:eu', { sub: 'b*b' });
    expect(await client.timeout(5000).emitWithAck('message', { clientMessageId: 'c1', text: 'forget me' })).toMatchObject({ ok: true });
    expect(await admin.smembers('relay:{user:b*b}:conversations')).toEqual([]);
    expect(await admin.exists(`${log}b*b`)).toBe(1);

    expect(await t.hub.store.log.deleteUser('b*b')).toBe(1);
    expect(await admin.exists(`${log}b*b`)).toBe(0);
    for (const sub of ['x}:log:b*b', 'b?b', 'bob']) expect(await admin.exists(`${log}${sub}`)).toBe(1);
    await admin.call('ACL', 'SETUSER', 'default', '+sadd');
    eu.disconnect();
  });
});

async function indexErrors(t: TestHub): Promise<number> {
  return (await t.hub.metrics.redisErrors.get()).values.find((v) => v.labels.component === 'conversation-index')?.value ?? 0;
}
