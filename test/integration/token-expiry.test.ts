import type { Socket } from 'socket.io-client';
import type { RefreshAck } from '../../src/protocol';
import { clientSocket, connected, nextEvent, startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';

let t: TestHub;
beforeAll(async () => {
  t = await startHub({ JWT_CLOCK_TOLERANCE_S: '0' });
  await t.agent('bot');
});
afterAll(() => t.close());

const refresh = (socket: Socket, token: unknown): Promise<RefreshAck> => socket.timeout(5000).emitWithAck('auth:refresh', { token });

/** A client whose token expires in `seconds`; listeners are attached before the handshake. */
async function shortLived(sub: string, seconds: number, roles?: string[]) {
  const socket = clientSocket(t.url, { token: mintToken({ sub, roles, expiresIn: seconds }), agentId: 'bot' });
  const expiring = nextEvent<{ expiresAt: string }>(socket, 'auth:expiring');
  const closed = nextEvent<{ code: string; retryable: boolean }>(socket, 'session:closed');
  const disconnected = nextEvent<string>(socket, 'disconnect');
  await connected(socket);
  return { socket, expiring, closed, disconnected };
}

it('warns with auth:expiring, then closes with TOKEN_EXPIRED when nobody refreshes', async () => {
  const s = await shortLived('lazy', 2);
  const { expiresAt } = await s.expiring; // less than 60 s left: sent at once
  expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(2000);
  expect(await s.closed).toEqual({ code: 'TOKEN_EXPIRED', retryable: true });
  expect(await s.disconnected).toBe('io server disconnect');
});

it('keeps the session when auth:refresh brings a fresh token for the same sub', async () => {
  const kept = await shortLived('diligent', 2);
  const control = await shortLived('control', 2); // same expiry, never refreshed
  await kept.expiring;
  const ack = await refresh(kept.socket, mintToken({ sub: 'diligent', expiresIn: 3600 }));
  expect(ack).toEqual({ ok: true, tokenExpiresAt: expect.any(String) });
  expect(Date.parse((ack as { tokenExpiresAt: string }).tokenExpiresAt)).toBeGreaterThan(Date.now() + 3500_000);

  await control.closed; // the original expiry has passed
  expect(kept.socket.connected).toBe(true);
  const send = await kept.socket.timeout(5000).emitWithAck('message', { clientMessageId: 'after', text: 'still here' });
  expect(send.ok).toBe(true);
  kept.socket.disconnect();
});

it('refuses refresh tokens that are invalid, expired, or for someone else', async () => {
  const socket = await t.client('bot', { sub: 'alice' });
  const admin = await t.client('bot', { sub: 'root', roles: ['ADMIN'] });
  const err = (code: string) => ({ ok: false, error: { code, message: expect.any(String) } });

  expect(await refresh(socket, 'garbage')).toEqual(err('TOKEN_INVALID'));
  expect(await refresh(socket, mintToken({ sub: 'alice', expiresIn: -10 }))).toEqual(err('TOKEN_EXPIRED'));
  expect(await refresh(socket, mintToken({ sub: 'bob' }))).toEqual(err('SUB_MISMATCH'));
  expect(await refresh(socket, mintToken({ sub: 'alice', roles: ['ADMIN'] }))).toEqual(err('SUB_MISMATCH'));
  expect(await refresh(admin, mintToken({ sub: 'root' }))).toEqual(err('SUB_MISMATCH'));
  expect(await refresh(socket, mintToken({ sub: 'alice', agentIds: ['elsewhere'] }))).toEqual(err('TOKEN_INVALID'));
  expect(await refresh(socket, 42)).toEqual(err('INVALID_PAYLOAD'));
  expect(socket.connected && admin.connected).toBe(true);
});
