import { createHmac } from 'node:crypto';
import type { Socket } from 'socket.io-client';
import type { RefreshAck } from '../../src/protocol';
import { clientSocket, connected, refusal, startHub, type TestHub } from '../helpers/hub';
import { TEST_JWT_SECRET } from '../helpers/tokens';
import { api, bearerClient } from './rest-client.helper';

/**
 * JWT times (`exp`, `iat`, `nbf`) beyond what a Date holds, or not finite numbers, are
 * TOKEN_INVALID: at the handshake, on auth:refresh and for REST bearer auth (not
 * SERVER_UNAVAILABLE, which the peer would retry).
 */
let t: TestHub;
beforeAll(async () => {
  t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '0' });
});
afterAll(() => t.close());

/** An HS256 token signed with the hub's secret over exactly `claims` (no library checks on the way). */
function signed(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${body}.${createHmac('sha256', TEST_JWT_SECRET).update(body).digest('base64url')}`;
}

const nowS = () => Math.floor(Date.now() / 1000);
/** Seconds past the last instant a Date can hold (8.64e15 ms). */
const BEYOND_DATES = 8.64e12 + 1;

const cases: [string, () => Record<string, unknown>][] = [
  ['exp 1e300', () => ({ iat: nowS(), exp: 1e300 })],
  ['exp just beyond the Date range', () => ({ iat: nowS(), exp: BEYOND_DATES })],
  ['exp -1e300 (not merely expired)', () => ({ iat: nowS(), exp: -1e300 })],
  ['iat 1e300', () => ({ iat: 1e300, exp: nowS() + 3600 })],
  ['iat negative beyond the Date range', () => ({ iat: -BEYOND_DATES, exp: nowS() + 3600 })],
  ['iat a string', () => ({ iat: 'yesterday', exp: nowS() + 3600 })],
  ['nbf negative beyond the Date range', () => ({ iat: nowS(), nbf: -1e300, exp: nowS() + 3600 })],
];

describe('out-of-range JWT times are TOKEN_INVALID', () => {
  it.each(cases)('handshake: %s', async (_name, claims) => {
    const token = signed({ sub: 'u1', ...claims() });
    expect(await refusal(clientSocket(t.url, { token, agentId: 'bot' }))).toEqual({ code: 'TOKEN_INVALID', retryable: false });
  });

  it.each(cases)('REST bearer: %s', async (_name, claims) => {
    const res = await api.me({ client: bearerClient(t.url, signed({ sub: 'u1', ...claims() })) });
    expect([res.response!.status, res.error]).toEqual([401, expect.objectContaining({ code: 'TOKEN_INVALID' })]);
  });

  it('auth:refresh refuses each of them and the session carries on', async () => {
    const socket: Socket = await connected(
      clientSocket(t.url, { token: signed({ sub: 'u1', iat: nowS(), exp: nowS() + 3600 }), agentId: 'bot' }),
    );
    try {
      for (const [name, claims] of cases) {
        const ack = (await socket.timeout(5000).emitWithAck('auth:refresh', { token: signed({ sub: 'u1', ...claims() }) })) as RefreshAck;
        expect({ name, ack }).toEqual({ name, ack: { ok: false, error: { code: 'TOKEN_INVALID', message: expect.any(String) } } });
      }
      expect(socket.connected).toBe(true);
    } finally {
      socket.disconnect();
    }
  });

  it('accepts the last exp a Date holds', async () => {
    const token = signed({ sub: 'u1', iat: nowS(), exp: 8.64e12 });
    const socket = await connected(clientSocket(t.url, { token, agentId: 'bot' }));
    socket.disconnect();
    const me = await api.me({ client: bearerClient(t.url, token) });
    expect(me.data!.data.tokenExpiresAt).toBe(new Date(8.64e15).toISOString());
  });
});
