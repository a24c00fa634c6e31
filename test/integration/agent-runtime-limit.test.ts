import { HandshakeCodes } from '../../src/protocol';
import { agentSocket, connected, refusal, startHub, type TestHub } from '../helpers/hub';
import { waitFor } from '../helpers/wait';
import { TEST_AGENT_KEY } from '../helpers/tokens';
import { startRedis, type TestRedis } from '../helpers/redis-server';

const MAX = 2;
const runtime = (t: TestHub, agentId: string) => agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId });

describe.each([
  ['one replica, in memory', false],
  ['two replicas over Redis', true],
])('MAX_RUNTIMES_PER_AGENT (%s)', (_name, withRedis) => {
  let redis: TestRedis | undefined;
  let a: TestHub;
  let b: TestHub;
  beforeAll(async () => {
    redis = withRedis ? await startRedis() : undefined;
    const env = { MAX_RUNTIMES_PER_AGENT: String(MAX), ...(redis ? { REDIS_URL: redis.url } : {}) };
    a = await startHub(env);
    b = redis ? await startHub(env) : a;
  });
  afterAll(async () => {
    await a.close();
    if (b !== a) await b.close();
    await redis?.close();
  });

  it('refuses a runtime past the bound with AGENT_RUNTIME_LIMIT (retryable), counting every replica, and lets one in once another left', async () => {
    const first = await connected(runtime(a, 'capped'));
    const second = await connected(runtime(b, 'capped'));
    expect(await refusal(runtime(a, 'capped'))).toEqual({ code: 'AGENT_RUNTIME_LIMIT', retryable: true });
    expect(await refusal(runtime(b, 'capped'))).toEqual({
      code: 'AGENT_RUNTIME_LIMIT',
      retryable: HandshakeCodes.AGENT_RUNTIME_LIMIT.retryable,
    });
    // The refused ones left presence again; the accepted ones are untouched.
    await waitFor(async () => (await a.hub.store.presence.getAgent('capped')).runtimes === MAX, 5000, 'presence to settle');
    expect(first.connected && second.connected).toBe(true);
    // Another bot has its own bound.
    const other = await connected(runtime(a, 'other-bot'));
    const limited = (await a.hub.metrics.rateLimited.get()).values.find((v) => v.labels.scope === 'agent_runtimes')?.value ?? 0;
    const limitedB =
      b === a ? 0 : ((await b.hub.metrics.rateLimited.get()).values.find((v) => v.labels.scope === 'agent_runtimes')?.value ?? 0);
    expect(limited + limitedB).toBe(2);

    first.disconnect();
    await waitFor(async () => (await a.hub.store.presence.getAgent('capped')).runtimes === MAX - 1, 5000, 'the runtime to leave');
    const third = await connected(runtime(b, 'capped'));
    expect(third.connected).toBe(true);
    for (const s of [second, third, other]) s.disconnect();
  });

  it('lets at most the bound in when many connect at once', async () => {
    const sockets = Array.from({ length: 8 }, (_, i) => runtime(i % 2 ? b : a, 'rush'));
    const outcomes = await Promise.allSettled(sockets.map((s) => connected(s)));
    const accepted = outcomes.filter((o) => o.status === 'fulfilled').length;
    expect(accepted).toBeGreaterThanOrEqual(1);
    expect(accepted).toBeLessThanOrEqual(MAX);
    for (const o of outcomes) {
      if (o.status === 'rejected') expect((o.reason as { data: unknown }).data).toEqual({ code: 'AGENT_RUNTIME_LIMIT', retryable: true });
    }
    await waitFor(async () => (await a.hub.store.presence.getAgent('rush')).runtimes === accepted, 5000, 'presence to settle');
    for (const s of sockets) s.disconnect();
  });
});
