import type { Socket } from 'socket.io-client';
import type { AgentStatus, SendAck } from '../../src/protocol';
import { RelayAgent } from '../../src/sdk/agent';
import { startHub, type TestHub } from '../helpers/hub';
import { TEST_AGENT_KEY } from '../helpers/tokens';
import { collect } from '../helpers/cluster';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { sleep, waitFor } from '../helpers/wait';

const GRACE_MS = 1500;

describe.each([
  ['in memory', false],
  ['over Redis', true],
])('agent restart grace (%s)', (_name, withRedis) => {
  let redis: TestRedis | undefined;
  let t: TestHub;
  beforeAll(async () => {
    redis = withRedis ? await startRedis() : undefined;
    const grace = { AGENT_RECONNECT_GRACE_MS: String(GRACE_MS) };
    t = await startHub(redis ? { ...grace, REDIS_URL: redis.url } : grace);
  });
  afterAll(async () => {
    await t.close();
    await redis?.close();
  });

  const send = (socket: Socket, clientMessageId: string): Promise<SendAck> =>
    socket.timeout(GRACE_MS + 5000).emitWithAck('message', { clientMessageId, text: `hello ${clientMessageId}` });

  it('holds a message sent while the bot restarts, delivers it to the new runtime and acks ok; no offline announced', async () => {
    const first = await t.agent('restarting');
    const client = await t.client('restarting', { sub: 'patient' });
    const statuses = collect<AgentStatus>(client, 'agent:status');
    first.close();
    await waitFor(
      async () => (await t.hub.store.presence.getAgent('restarting')).runtimes === 0,
      5000,
      'the runtime gone from presence',
      20,
    );

    const sentAt = Date.now();
    const ack = send(client, 'during-restart');
    await sleep(400); // the restart takes a while
    // The held message reaches the runtime as soon as it connects: its handler is set first.
    const second = new RelayAgent({ url: t.url, apiKey: TEST_AGENT_KEY, agentId: 'restarting' });
    const received = new Promise<string>((resolve) => second.onMessage((m) => resolve(m.text)));
    await second.connect();
    expect(await ack).toEqual({ ok: true, id: expect.any(String), ts: expect.any(String) });
    expect(await received).toBe('hello during-restart');
    expect(Date.now() - sentAt).toBeLessThan(GRACE_MS);

    // Past the first departure's grace: still no offline, and no online either (nobody saw it go).
    await sleep(GRACE_MS + 200);
    expect(statuses).toEqual([]);
    second.close();
  });

  it('answers AGENT_OFFLINE once the grace ends without a runtime, and only then announces offline', async () => {
    const agent = await t.agent('gone-for-good');
    const client = await t.client('gone-for-good', { sub: 'waiting' });
    const statuses = collect<AgentStatus>(client, 'agent:status');
    agent.close();
    await waitFor(
      async () => (await t.hub.store.presence.getAgent('gone-for-good')).runtimes === 0,
      5000,
      'the runtime gone from presence',
      20,
    );
    const leftAt = Date.now();

    const ack = await send(client, 'too-late');
    expect(ack).toMatchObject({ ok: false, error: { code: 'AGENT_OFFLINE' } });
    expect(Date.now() - leftAt).toBeGreaterThanOrEqual(GRACE_MS - 300);
    await waitFor(() => statuses.length > 0, 5000, 'a status', 20);
    expect(statuses).toEqual([{ agentId: 'gone-for-good', online: false }]);
    expect(Date.now() - leftAt).toBeGreaterThanOrEqual(GRACE_MS - 300);

    // After the grace: at once.
    const at = Date.now();
    expect(await send(client, 'later')).toMatchObject({ ok: false, error: { code: 'AGENT_OFFLINE' } });
    expect(Date.now() - at).toBeLessThan(500);
  });

  it('answers AGENT_OFFLINE at once for a bot that never had a runtime', async () => {
    const client = await t.client('never-seen', { sub: 'u' });
    const at = Date.now();
    expect(await send(client, 'm')).toMatchObject({ ok: false, error: { code: 'AGENT_OFFLINE' } });
    expect(Date.now() - at).toBeLessThan(500);
  });
});
