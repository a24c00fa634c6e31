import { io as connect, type Socket } from 'socket.io-client';
import { Namespaces, type HandshakeErrorData } from '../../src/protocol';
import { connected, refusal, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';

const LIMIT = 10;
const ATTACKS = 50;

interface From {
  /** Sent as X-Forwarded-For (only meaningful under TRUST_PROXY). */
  forwardedFor?: string;
  /** Source address of the TCP connection. */
  localAddress?: string;
}

function socketFrom(url: string, namespace: string, auth: Record<string, unknown>, from: From): Socket {
  return connect(`${url}${namespace}`, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    auth,
    ...(from.forwardedFor ? { extraHeaders: { 'x-forwarded-for': from.forwardedFor } } : {}),
    ...(from.localAddress ? ({ localAddress: from.localAddress } as object) : {}),
  });
}

const badClient = (url: string, from: From) => socketFrom(url, Namespaces.client, { token: 'not-a-jwt', agentId: 'bot' }, from);
const goodClient = (url: string, from: From, sub = 'good') =>
  socketFrom(url, Namespaces.client, { token: mintToken({ sub }), agentId: 'bot' }, from);

/**
 * Fires ATTACKS bad handshakes from `attacker` all at once and, while they are in flight, connects a
 * valid client from `bystander`. Returns the refusal codes the attacker got.
 */
async function attackWhileAnotherConnects(url: string, attacker: From, bystander: From): Promise<string[]> {
  const attacks = Array.from({ length: ATTACKS }, () => refusal(badClient(url, attacker)));
  const other = goodClient(url, bystander);
  await connected(other);
  const codes = (await Promise.all(attacks)).map((d) => d.code);
  other.disconnect();
  return codes;
}

function tally(codes: string[]): Record<string, number> {
  return codes.reduce<Record<string, number>>((acc, c) => ({ ...acc, [c]: (acc[c] ?? 0) + 1 }), {});
}

describe('handshake-failure limit behind a proxy (TRUST_PROXY=true, X-Forwarded-For)', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: String(LIMIT), TRUST_PROXY: 'true' });
  });
  afterAll(() => t.close());

  const attacker = { forwardedFor: '203.0.113.7' };
  const bystander = { forwardedFor: '198.51.100.9' };

  it(`cuts off ${ATTACKS} bad handshakes from one address after ${LIMIT} while another address connects`, async () => {
    const codes = await attackWhileAnotherConnects(t.url, attacker, bystander);
    expect(tally(codes)).toEqual({ TOKEN_INVALID: LIMIT, RATE_LIMITED: ATTACKS - LIMIT });
  });

  it('keeps unverified credentials of the cut-off address out on both namespaces (retryable), lets verified ones in', async () => {
    expect(await refusal(badClient(t.url, attacker))).toEqual({ code: 'RATE_LIMITED', retryable: true });
    const wrongKey = socketFrom(t.url, Namespaces.agent, { apiKey: 'wrong-key', agentId: 'bot' }, attacker);
    expect((await refusal(wrongKey)).code).toBe('RATE_LIMITED');
    // Others' failures do not lock out a holder of a valid credential at the same address (issue 10).
    const good = goodClient(t.url, attacker);
    await connected(good);
    good.disconnect();
    const agent = socketFrom(t.url, Namespaces.agent, { apiKey: TEST_AGENT_KEY, agentId: 'bot' }, attacker);
    await connected(agent);
    agent.disconnect();
  });

  it('keys on the client address the proxy reports, not the proxy (every request here comes from 127.0.0.1)', async () => {
    const fresh = goodClient(t.url, { forwardedFor: '192.0.2.44' });
    await connected(fresh);
    fresh.disconnect();
  });

  it('counts rejected agent handshakes too', async () => {
    const from = { forwardedFor: '203.0.113.99' };
    const wrongKey = () => socketFrom(t.url, Namespaces.agent, { apiKey: 'wrong-key', agentId: 'bot' }, from);
    const codes: string[] = [];
    for (let i = 0; i < LIMIT + 2; i++) codes.push((await refusal(wrongKey())).code);
    expect(tally(codes)).toEqual({ API_KEY_INVALID: LIMIT, RATE_LIMITED: 2 });
  });
});

describe('handshake-failure limit on raw peer addresses (TRUST_PROXY=false)', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: String(LIMIT) });
  });
  afterAll(() => t.close());

  // Linux routes all of 127.0.0.0/8 to loopback, so a second local address is a second client.
  const attacker = { localAddress: '127.0.0.1' };
  const bystander = { localAddress: '127.0.0.2' };

  it(`cuts off ${ATTACKS} bad handshakes from 127.0.0.1 after ${LIMIT} while 127.0.0.2 connects`, async () => {
    const codes = await attackWhileAnotherConnects(t.url, attacker, bystander);
    expect(tally(codes)).toEqual({ TOKEN_INVALID: LIMIT, RATE_LIMITED: ATTACKS - LIMIT });
  });

  it('ignores X-Forwarded-For from an untrusted peer, so a forged header does not escape the limit', async () => {
    for (const forged of ['198.51.100.1', '198.51.100.2', '10.0.0.1, 198.51.100.3']) {
      const data: HandshakeErrorData = await refusal(badClient(t.url, { ...attacker, forwardedFor: forged }));
      expect(data).toEqual({ code: 'RATE_LIMITED', retryable: true });
    }
  });

  it('still serves the other address afterwards', async () => {
    const other = goodClient(t.url, bystander);
    await connected(other);
    other.disconnect();
  });
});

describe('handshake-failure limit shared through Redis by two replicas', () => {
  let redis: TestRedis;
  let a: TestHub;
  let b: TestHub;
  beforeAll(async () => {
    redis = await startRedis();
    const settings = { REDIS_URL: redis.url, HANDSHAKE_FAILURES_PER_MIN: String(LIMIT), TRUST_PROXY: 'true' };
    a = await startHub(settings);
    b = await startHub(settings);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.close();
  });

  it(`cuts off ${ATTACKS} bad handshakes spread over both replicas after ${LIMIT} in total`, async () => {
    const attacker = { forwardedFor: '203.0.113.50' };
    const codes = (await Promise.all(Array.from({ length: ATTACKS }, (_, i) => refusal(badClient((i % 2 ? a : b).url, attacker))))).map(
      (d) => d.code,
    );
    // Concurrent attempts all pass the check before the first failure is counted, but each failure
    // is counted atomically in Redis before it is answered: exactly LIMIT verdicts get out.
    expect(tally(codes)).toEqual({ TOKEN_INVALID: LIMIT, RATE_LIMITED: ATTACKS - LIMIT });
    for (const hub of [a, b]) expect((await refusal(badClient(hub.url, attacker))).code).toBe('RATE_LIMITED');
  });

  it('counts sequential failures on one replica against the other', async () => {
    const attacker = { forwardedFor: '203.0.113.51' };
    for (let i = 0; i < LIMIT; i++) expect((await refusal(badClient(a.url, attacker))).code).toBe('TOKEN_INVALID');
    expect(await refusal(badClient(b.url, attacker))).toEqual({ code: 'RATE_LIMITED', retryable: true });
    const other = goodClient(b.url, { forwardedFor: '198.51.100.50' });
    await connected(other);
    other.disconnect();
  });

  it('keeps limiting per replica while Redis is down (never open), and counts the Redis errors', async () => {
    await redis.stop();
    try {
      const attacker = { forwardedFor: '203.0.113.52' };
      const codes: string[] = [];
      for (let i = 0; i < LIMIT + 3; i++) codes.push((await refusal(badClient(a.url, attacker))).code);
      expect(tally(codes)).toEqual({ TOKEN_INVALID: LIMIT, RATE_LIMITED: 3 });
      const errors = await a.hub.metrics.redisErrors.get();
      expect(errors.values.find((v) => v.labels.component === 'auth-failure-limiter')?.value).toBeGreaterThan(0);
    } finally {
      await redis.start();
    }
  });
});
