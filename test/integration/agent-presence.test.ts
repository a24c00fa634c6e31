import { Events } from '../../src/relay/protocol';
import { startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';

describe.each([
  ['in memory', false],
  ['over Redis', true],
])('runtime presence (%s)', (_name, withRedis) => {
  let redis: TestRedis | undefined;
  let t: TestHub;
  beforeAll(async () => {
    redis = withRedis ? await startRedis() : undefined;
    t = await startHub(redis ? { REDIS_URL: redis.url } : {});
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

  it('takes a runtime out of presence when it leaves, and reports the bot offline', async () => {
    const agent = await t.agent('leaving');
    expect((await t.hub.store.presence.getAgent('leaving')).runtimes).toBe(1);
    const client = await t.client('leaving', { sub: 'watcher' });
    const offline = new Promise((resolve) => client.on(Events.agentStatus, (s: { online: boolean }) => !s.online && resolve(s)));
    agent.close();
    await offline;
    expect((await t.hub.store.presence.getAgent('leaving')).runtimes).toBe(0);
  });
});
