import { clientSocket, connected, refusal, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { mintToken } from '../helpers/tokens';
import { adminToken, anonymousClient, api, apiKeyClient, bearerClient, createKey } from './rest-client.helper';

const LIMIT = 5;

/** Headers that make the hub (TRUST_PROXY=true) see the request as coming from `ip`. */
const from = (ip: string) => ({ 'x-forwarded-for': ip });

/** Spends `ip`'s whole failure budget on wrong API keys; every attempt must be a plain 401. */
async function exhaust(url: string, ip: string): Promise<void> {
  for (let i = 0; i < LIMIT; i++) {
    const res = await api.mintEmbedToken({ client: apiKeyClient(url, `rk_wrong-${i}`), headers: from(ip) });
    expect(res.error).toMatchObject({ status: 401, code: 'API_KEY_INVALID' });
  }
}

describe.each([
  ['in memory', false],
  ['shared through Redis', true],
])('REST authentication failures per IP (%s)', (_name, withRedis) => {
  let redis: TestRedis | undefined;
  let h: TestHub;
  let key: string;
  beforeAll(async () => {
    redis = withRedis ? await startRedis() : undefined;
  });
  afterAll(() => redis?.close());
  beforeEach(async () => {
    h = await startHub({
      HANDSHAKE_FAILURES_PER_MIN: String(LIMIT),
      TRUST_PROXY: 'true',
      ...(redis ? { REDIS_URL: redis.url } : {}),
    });
    key = await createKey(h.url, ['embed:mint']);
  });
  // Every test uses addresses of its own, so the shared counters of one test never reach another.
  afterEach(() => h.close());

  it('answers 429 problem+json with an exact Retry-After once an address used up its failures; a valid key still works', async () => {
    await exhaust(h.url, '203.0.113.7');
    const limited = await api.mintEmbedToken({ client: apiKeyClient(h.url, 'rk_wrong-more'), headers: from('203.0.113.7') });
    expect(limited.response!.status).toBe(429);
    expect(limited.response!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(limited.response!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.error).toMatchObject({ status: 429, code: 'RATE_LIMITED', title: 'Too Many Requests' });
    const valid = await api.mintEmbedToken({ client: apiKeyClient(h.url, key), headers: from('203.0.113.7') });
    expect(valid.response!.status).toBe(201);
  });

  it('gives out exactly the budget of 401s to concurrent guesses, 429 to the rest', async () => {
    const guesses = await Promise.all(
      Array.from({ length: LIMIT * 4 }, (_, i) =>
        api.mintEmbedToken({ client: apiKeyClient(h.url, `rk_guess-${i}`), headers: from('203.0.113.11') }),
      ),
    );
    const statuses = guesses.map((g) => g.response!.status).sort();
    expect(statuses).toEqual([...Array(LIMIT).fill(401), ...Array(LIMIT * 3).fill(429)]);
  });

  it('leaves other addresses, unauthenticated routes and the failure-free path alone', async () => {
    await exhaust(h.url, '203.0.113.8');
    const other = await api.mintEmbedToken({ client: apiKeyClient(h.url, key), headers: from('198.51.100.9') });
    expect(other.response!.status).toBe(201);
    const live = await api.getLiveness({ client: anonymousClient(h.url), headers: from('203.0.113.8') });
    expect(live.response!.status).toBe(200);
    // Successes and 403s (a valid credential without the right role) are not failures.
    const ip = '192.0.2.10';
    for (let i = 0; i < LIMIT * 2; i++) {
      const forbidden = await api.getUsers({ client: bearerClient(h.url, mintToken({ sub: 'u1' })), headers: from(ip) });
      expect(forbidden.error).toMatchObject({ status: 403, code: 'ROLE_REQUIRED' });
    }
    const admin = await api.getUsers({ client: bearerClient(h.url, adminToken()), headers: from(ip) });
    expect(admin.response!.status).toBe(200);
  });

  it('shares one budget with the socket handshakes, both ways', async () => {
    await exhaust(h.url, '203.0.113.9');
    const socket = clientSocket(h.url, { token: 'not-a-jwt', agentId: 'bot' }, { headers: from('203.0.113.9') });
    expect(await refusal(socket)).toEqual({ code: 'RATE_LIMITED', retryable: true });

    const ip = '203.0.113.10';
    for (let i = 0; i < LIMIT; i++) {
      const bad = clientSocket(h.url, { token: 'not-a-jwt', agentId: 'bot' }, { headers: from(ip) });
      expect((await refusal(bad)).code).toBe('TOKEN_INVALID');
    }
    const me = await api.me({ client: bearerClient(h.url, 'not-a-jwt'), headers: from(ip) });
    expect(me.error).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    const verified = await api.me({ client: bearerClient(h.url, mintToken({ sub: 'u1' })), headers: from(ip) });
    expect(verified.response!.status).toBe(200);

    const fine = clientSocket(h.url, { token: mintToken({ sub: 'u2' }), agentId: 'bot' }, { headers: from('198.51.100.20') });
    await connected(fine);
    fine.disconnect();
  });
});
