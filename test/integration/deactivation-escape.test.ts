import type { Socket } from 'socket.io-client';
import type { RefreshAck } from '../../src/protocol';
import { nextEvent, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { mintToken } from '../helpers/tokens';

const refresh = (socket: Socket, token: unknown): Promise<RefreshAck> => socket.timeout(5000).emitWithAck('auth:refresh', { token });

/**
 * Issue 10: the deactivation broadcast is fire-and-forget. A session that missed it (simulated
 * here by writing the deactivation to the store without the broadcast, as a replica cut off from
 * pub/sub would see it) must neither refresh forever nor live on.
 */
describe('deactivation reaches sessions that missed its broadcast', () => {
  let redis: TestRedis;
  let a: TestHub;
  let b: TestHub;
  beforeAll(async () => {
    redis = await startRedis();
    // The re-check is off here so that only auth:refresh can end these sessions.
    a = await startHub({ REDIS_URL: redis.url, DEACTIVATION_RECHECK_S: '0' });
    b = await startHub({ REDIS_URL: redis.url, DEACTIVATION_RECHECK_S: '0' });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.close();
  });

  it('refuses auth:refresh after a deactivation on every replica, then closes the session', async () => {
    const sockets = [await a.client('bot', { sub: 'mallory' }), await b.client('bot', { sub: 'mallory' })];
    const bystander = await b.client('bot', { sub: 'alice' });
    await a.hub.store.deactivations.deactivate('mallory'); // no broadcast
    for (const socket of sockets) {
      const closed = nextEvent(socket, 'session:closed');
      const disconnected = nextEvent(socket, 'disconnect');
      expect(await refresh(socket, mintToken({ sub: 'mallory' }))).toMatchObject({ ok: false, error: { code: 'USER_DEACTIVATED' } });
      expect(await closed).toEqual({ code: 'USER_DEACTIVATED', retryable: false });
      expect(await disconnected).toBe('io server disconnect');
    }
    expect(await refresh(bystander, mintToken({ sub: 'alice' }))).toMatchObject({ ok: true });
  });
});

describe('DEACTIVATION_RECHECK_S', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ DEACTIVATION_RECHECK_S: '1' });
  });
  afterAll(() => t.close());

  it('closes the live sessions of a user deactivated without a broadcast within one period, and only those', async () => {
    const victim = await t.client('bot', { sub: 'eve', expiresIn: 3600 });
    const other = await t.client('bot', { sub: 'bob' });
    const closed = nextEvent(victim, 'session:closed');
    const disconnected = nextEvent(victim, 'disconnect');
    const started = Date.now();
    await t.hub.store.deactivations.deactivate('eve'); // no broadcast
    expect(await closed).toEqual({ code: 'USER_DEACTIVATED', retryable: false });
    expect(await disconnected).toBe('io server disconnect');
    expect(Date.now() - started).toBeLessThan(2500);
    expect(other.connected).toBe(true);
  });
});
