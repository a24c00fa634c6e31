import { Namespaces } from '../../src/protocol';
import { io as connect } from 'socket.io-client';
import { clientSocket, connected, refusal, startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';
import { api, apiKeyClient, createKey } from './rest-client.helper';

const LIMIT = 3;
const GOOD = 'https://good.example';
const EVIL = 'https://evil.example';

/** Headers that make the hub (TRUST_PROXY=true) see the request as coming from `ip`. */
const from = (ip: string, origin?: string) => ({ 'x-forwarded-for': ip, ...(origin ? { origin } : {}) });

/**
 * Issue 10: any web page can make its visitors' browsers fail handshakes (a foreign Origin, a
 * garbage token). The failure budget must not turn that into a lockout of the good users who share
 * the address (an office, a carrier NAT).
 */
describe('failure limits do not lock good users out of a shared address', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: String(LIMIT), TRUST_PROXY: 'true', CORS_ORIGINS: GOOD });
  });
  afterAll(() => t.close());

  it('does not count 50 bad-Origin handshakes: a valid client from the same address connects', async () => {
    const ip = '203.0.113.20';
    const auth = () => ({ token: mintToken({ sub: 'visitor' }), agentId: 'bot' });
    const codes = await Promise.all(
      Array.from({ length: 50 }, async () => (await refusal(clientSocket(t.url, auth(), { headers: from(ip, EVIL) }))).code),
    );
    expect(new Set(codes)).toEqual(new Set(['ORIGIN_NOT_ALLOWED']));
    const good = clientSocket(t.url, auth(), { headers: from(ip, GOOD) });
    await connected(good);
    good.disconnect();
    // The budget is untouched: the address still gets its LIMIT verdicts on bad tokens.
    for (let i = 0; i < LIMIT; i++) {
      expect((await refusal(clientSocket(t.url, { token: 'bad', agentId: 'bot' }, { headers: from(ip, GOOD) }))).code).toBe(
        'TOKEN_INVALID',
      );
    }
  });

  it('lets a valid token and a valid agent key in from an address whose budget others spent', async () => {
    const ip = '203.0.113.21';
    const codes: string[] = [];
    for (let i = 0; i < LIMIT + 2; i++)
      codes.push((await refusal(clientSocket(t.url, { token: 'bad', agentId: 'bot' }, { headers: from(ip) }))).code);
    expect(codes).toEqual([...Array(LIMIT).fill('TOKEN_INVALID'), 'RATE_LIMITED', 'RATE_LIMITED']);

    const good = clientSocket(t.url, { token: mintToken({ sub: 'colleague' }), agentId: 'bot' }, { headers: from(ip) });
    await connected(good);
    good.disconnect();
    const runtime = agentSocketFrom(t.url, ip, TEST_AGENT_KEY);
    await connected(runtime);
    runtime.disconnect();
    // A wrong key is still cut off: no verdict on unverified credentials past the budget.
    expect((await refusal(agentSocketFrom(t.url, ip, 'wrong-key'))).code).toBe('RATE_LIMITED');
  });

  it('limits an identity that failed on its own, and only that identity', async () => {
    const ip = '203.0.113.22';
    const expired = () =>
      clientSocket(t.url, { token: mintToken({ sub: 'stale', expiresIn: -60 }), agentId: 'bot' }, { headers: from(ip) });
    const codes: string[] = [];
    for (let i = 0; i < LIMIT + 1; i++) codes.push((await refusal(expired())).code);
    expect(codes).toEqual([...Array(LIMIT).fill('TOKEN_EXPIRED'), 'RATE_LIMITED']);
    // The same sub with a fresh token is limited from this address (its own budget is spent)…
    const sameSub = clientSocket(t.url, { token: mintToken({ sub: 'stale' }), agentId: 'bot' }, { headers: from(ip) });
    expect(await refusal(sameSub)).toEqual({ code: 'RATE_LIMITED', retryable: true });
    // …another user from the same address is not, nor the same user from elsewhere.
    for (const [sub, addr] of [
      ['fresh', ip],
      ['stale', '198.51.100.22'],
    ]) {
      const other = clientSocket(t.url, { token: mintToken({ sub }), agentId: 'bot' }, { headers: from(addr) });
      await connected(other);
      other.disconnect();
    }
  });

  it('over REST: a valid API key works from an address past its budget; a wrong one gets 429 with an exact Retry-After', async () => {
    const ip = '203.0.113.23';
    const key = await createKey(t.url, ['embed:mint']);
    for (let i = 0; i < LIMIT; i++) {
      const res = await api.mintEmbedToken({ client: apiKeyClient(t.url, `rk_wrong-${i}`), headers: from(ip) });
      expect(res.response!.status).toBe(401);
    }
    const wrong = await api.mintEmbedToken({ client: apiKeyClient(t.url, 'rk_wrong-again'), headers: from(ip) });
    expect(wrong.response!.status).toBe(429);
    const retryAfter = Number(wrong.response!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const good = await api.mintEmbedToken({ client: apiKeyClient(t.url, key), headers: from(ip) });
    expect(good.response!.status).toBe(201);
  });
});

function agentSocketFrom(url: string, ip: string, apiKey: string) {
  return connect(`${url}${Namespaces.agent}`, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    autoConnect: false,
    auth: { apiKey, agentId: 'bot' },
    extraHeaders: from(ip),
  });
}
