import { Events, Namespaces } from '../../src/protocol';
import Redis from 'ioredis';
import { agentSocket, startHub, type TestHub } from '../helpers/hub';
import { waitFor } from '../helpers/wait';
import { TEST_AGENT_KEY } from '../helpers/tokens';
import { startRedis, type TestRedis } from '../helpers/redis-server';

describe.each([
  ['in memory', false],
  ['over Redis', true],
])('runtime presence (%s)', (_name, withRedis) => {
  let redis: TestRedis | undefined;
  let t: TestHub;
  beforeAll(async () => {
    redis = withRedis ? await startRedis() : undefined;
    const grace = { AGENT_RECONNECT_GRACE_MS: '300' };
    t = await startHub(redis ? { ...grace, REDIS_URL: redis.url } : grace);
  });
  afterAll(async () => {
    await t.close();
    await redis?.close();
  });

  it('counts a runtime as soon as its connect() resolves, and reports the bot online', async () => {
    const client = await t.client('arriving', { sub: 'watcher' });
    const online = new Promise((resolve) => client.on(Events.agentStatus, (s: { online: boolean }) => s.online && resolve(s)));
    await t.agent('arriving');
    expect((await t.hub.store.presence.getAgent('arriving')).runtimes).toBe(1);
    expect(await online).toEqual({ agentId: 'arriving', online: true });
  });

  it('takes a runtime out of presence when it leaves, and reports the bot offline after the grace', async () => {
    const agent = await t.agent('leaving');
    expect((await t.hub.store.presence.getAgent('leaving')).runtimes).toBe(1);
    const client = await t.client('leaving', { sub: 'watcher' });
    const offline = new Promise((resolve) => client.on(Events.agentStatus, (s: { online: boolean }) => !s.online && resolve(s)));
    agent.close();
    await offline;
    expect((await t.hub.store.presence.getAgent('leaving')).runtimes).toBe(0);
  });
});

describe('a runtime whose connection closes during the handshake', () => {
  let redis: TestRedis;
  let t: TestHub;
  let admin: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    t = await startHub({ REDIS_URL: redis.url });
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    admin.disconnect();
    await t.close();
    await redis.close();
  });

  const accepted = async () => (await t.hub.metrics.handshakes.get()).values.find((v) => v.labels.result === 'accepted')?.value ?? 0;

  it('never enters presence', async () => {
    const namespaceConnect = new Promise<void>((resolve) =>
      t.hub.io.engine.once('connection', (conn: { on(event: 'packet', fn: (p: { data?: unknown }) => void): void }) =>
        conn.on('packet', (packet) => String(packet.data).startsWith(`0${Namespaces.agent}`) && resolve()),
      ),
    );
    const before = await accepted();
    // The handshake's failure-limit check reads Redis: hold every Redis client while the peer leaves.
    await admin.call('CLIENT', 'PAUSE', '1000', 'ALL');
    const peer = agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'vanishing' });
    await namespaceConnect;
    peer.io.engine.close();
    // When the pause ends, the checks pass for a connection that is already gone.
    await waitFor(async () => (await accepted()) > before, 5000, 'the held handshake to complete');
    expect(await t.hub.store.presence.getAgent('vanishing')).toEqual({ agentId: 'vanishing', runtimes: 0, clients: 0 });
  });
});
