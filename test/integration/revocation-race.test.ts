import type { Socket } from 'socket.io-client';
import { Namespaces, type SessionClosed } from '../../src/protocol';
import { agentSocket, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { adminToken, api, bearerClient, createKeyRecord } from './rest-client.helper';

/**
 * A managed key deleted while a runtime's handshake is between its credential check and its
 * `connection` handler: the deletion's broadcast finds no socket in the key's room yet, so the
 * runtime must find out by itself that its key is gone. The test deletes the key from a namespace
 * middleware added after the hub's own, which runs exactly in that window.
 */
describe.each([
  ['one hub', false],
  ['one hub over Redis', true],
])('a key revoked during its runtime handshake (%s)', (_name, withRedis) => {
  let redis: TestRedis | undefined;
  let t: TestHub;
  beforeAll(async () => {
    redis = withRedis ? await startRedis() : undefined;
    t = await startHub(redis ? { REDIS_URL: redis.url } : {});
  });
  afterAll(async () => {
    await t?.close();
    await redis?.close();
  });

  it('ends that runtime with session:closed API_KEY_REVOKED and never lists it online', async () => {
    const { id, key } = await createKeyRecord(t.url, { scopes: ['agent:connect'], agentIds: ['bot-r'] });
    let revokedInWindow = false;
    t.hub.io.of(Namespaces.agent).use((socket, next) => {
      if ((socket.data as { apiKeyId?: string }).apiKeyId !== id || revokedInWindow) return next();
      revokedInWindow = true;
      void api
        .deleteApiKey({ client: bearerClient(t.url, adminToken()), path: { id } })
        .then((res) => (res.response!.status === 200 ? next() : next(new Error(`deleteApiKey: ${res.response!.status}`))));
    });

    const runtime = agentSocket(t.url, { apiKey: key, agentId: 'bot-r' });
    const closed = new Promise<SessionClosed>((resolve) => runtime.once('session:closed', resolve));
    const disconnected = new Promise<string>((resolve) => runtime.once('disconnect', resolve));
    runtime.connect();
    expect(await closed).toEqual({ code: 'API_KEY_REVOKED', retryable: false });
    expect(await disconnected).toBe('io server disconnect');
    expect(revokedInWindow).toBe(true);
    expect(t.hub.io.of(Namespaces.agent).sockets.size).toBe(0);
    const agent = await api.getAgentById({ client: bearerClient(t.url, adminToken()), path: { agentId: 'bot-r' } });
    expect(agent.data?.data).toMatchObject({ online: false, runtimes: 0 });
  });

  it('leaves a runtime whose key still exists connected', async () => {
    const { key } = await createKeyRecord(t.url, { scopes: ['agent:connect'], agentIds: ['bot-s'] });
    const runtime: Socket = agentSocket(t.url, { apiKey: key, agentId: 'bot-s' });
    try {
      await new Promise<void>((resolve, reject) => {
        runtime.once('connect', () => resolve());
        runtime.once('connect_error', reject);
        runtime.connect();
      });
      // The key check runs after the connection handler; a round trip through the hub's store
      // (another REST read) comes after it, so by then a wrongly closed session would show.
      await api.getApiKeys({ client: bearerClient(t.url, adminToken()) });
      expect(runtime.connected).toBe(true);
    } finally {
      runtime.disconnect();
    }
  });
});
