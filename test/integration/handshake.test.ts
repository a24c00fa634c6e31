import type { Socket } from 'socket.io-client';
import WebSocket from 'ws';
import jwt from 'jsonwebtoken';
import { Namespaces } from '../../src/protocol';
import { agentSocket, clientSocket, connected, nextEvent, refusal, startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_AGENT_KEY, TEST_JWT_SECRET } from '../helpers/tokens';

let t: TestHub;
beforeAll(async () => {
  t = await startHub({ AGENT_API_KEYS: `${TEST_AGENT_KEY},second-rotation-key-0123`, HANDSHAKE_FAILURES_PER_MIN: '0' });
});
afterAll(() => t.close());

describe('/ws/agent handshake', () => {
  it('accepts a configured key and a valid agentId', async () => {
    const agent = await t.agent('bot.A:1-x_y');
    expect(agent.connected).toBe(true);
  });

  it('accepts every key of AGENT_API_KEYS (rotation)', async () => {
    const socket = agentSocket(t.url, { apiKey: 'second-rotation-key-0123', agentId: 'bot' });
    await connected(socket);
    socket.disconnect();
  });

  it.each([
    ['missing apiKey', { agentId: 'bot' }, 'API_KEY_INVALID'],
    ['wrong apiKey', { apiKey: 'nope', agentId: 'bot' }, 'API_KEY_INVALID'],
    ['apiKey of another type', { apiKey: ['x'], agentId: 'bot' }, 'API_KEY_INVALID'],
    ['a prefix of the key', { apiKey: TEST_AGENT_KEY.slice(0, -1), agentId: 'bot' }, 'API_KEY_INVALID'],
    ['missing agentId', { apiKey: TEST_AGENT_KEY }, 'AGENT_ID_REQUIRED'],
    ['empty agentId', { apiKey: TEST_AGENT_KEY, agentId: '' }, 'AGENT_ID_REQUIRED'],
    ['agentId with a space', { apiKey: TEST_AGENT_KEY, agentId: 'a b' }, 'AGENT_ID_INVALID'],
    ['agentId with #', { apiKey: TEST_AGENT_KEY, agentId: 'a#b' }, 'AGENT_ID_INVALID'],
    ['agentId over 128 chars', { apiKey: TEST_AGENT_KEY, agentId: 'a'.repeat(129) }, 'AGENT_ID_INVALID'],
    ['numeric agentId', { apiKey: TEST_AGENT_KEY, agentId: 42 }, 'AGENT_ID_INVALID'],
  ])('refuses %s with %s', async (_name, auth, code) => {
    expect(await refusal(agentSocket(t.url, auth))).toEqual({ code, retryable: false });
  });
});

describe('/ws/client handshake', () => {
  const refused = (auth: Record<string, unknown>) => refusal(clientSocket(t.url, auth));

  it('accepts a valid token and sends the session', async () => {
    const socket = clientSocket(t.url, { token: mintToken({ sub: 'u1', email: 'u1@example.com' }), agentId: 'bot' });
    const session = nextEvent(socket, 'session');
    await connected(socket);
    expect(await session).toEqual({
      clientId: 'u1',
      agentId: 'bot',
      agentOnline: expect.any(Boolean),
      tokenExpiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    socket.disconnect();
  });

  it.each([
    ['no token', { agentId: 'bot' }, 'TOKEN_REQUIRED', false],
    ['an empty token', { token: '', agentId: 'bot' }, 'TOKEN_REQUIRED', false],
    ['garbage', { token: 'not.a.jwt', agentId: 'bot' }, 'TOKEN_INVALID', false],
    ['another secret', { token: mintToken({ sub: 'u' }, 'x'.repeat(40)), agentId: 'bot' }, 'TOKEN_INVALID', false],
    ['an unpinned algorithm', { token: mintToken({ sub: 'u' }, TEST_JWT_SECRET, 'HS512'), agentId: 'bot' }, 'TOKEN_INVALID', false],
    ['alg none', { token: jwt.sign({ sub: 'u', exp: 9999999999 }, '', { algorithm: 'none' }), agentId: 'bot' }, 'TOKEN_INVALID', false],
    ['no exp', { token: mintToken({ sub: 'u', expiresIn: null }), agentId: 'bot' }, 'TOKEN_INVALID', false],
    ['an expired token', { token: mintToken({ sub: 'u', expiresIn: -60 }), agentId: 'bot' }, 'TOKEN_EXPIRED', true],
    ['no sub', { token: mintToken({}), agentId: 'bot' }, 'SUB_REQUIRED', false],
    ['an empty sub', { token: mintToken({ sub: '' }), agentId: 'bot' }, 'SUB_REQUIRED', false],
    ['a numeric sub', { token: mintToken({ sub: 7 as unknown as string }), agentId: 'bot' }, 'SUB_REQUIRED', false],
    ['sub admin without ADMIN', { token: mintToken({ sub: 'admin', roles: ['USER'] }), agentId: 'bot' }, 'SUB_RESERVED', false],
    ['roles that are not an array', { token: mintToken({ sub: 'u', roles: 'ADMIN' }), agentId: 'bot' }, 'TOKEN_INVALID', false],
    ['missing agentId', { token: mintToken({ sub: 'u' }) }, 'AGENT_ID_REQUIRED', false],
    ['invalid agentId', { token: mintToken({ sub: 'u' }), agentId: 'x/y' }, 'AGENT_ID_INVALID', false],
    ['agentId outside agentIds', { token: mintToken({ sub: 'u', agentIds: ['other'] }), agentId: 'bot' }, 'AGENT_NOT_ALLOWED', false],
  ])('refuses %s with %s', async (_name, auth, code, retryable) => {
    expect(await refused(auth)).toEqual({ code, retryable });
  });

  it('tolerates JWT_CLOCK_TOLERANCE_S of skew past exp', async () => {
    const socket = clientSocket(t.url, { token: mintToken({ sub: 'u', expiresIn: -2 }), agentId: 'bot' });
    await connected(socket);
    socket.disconnect();
  });

  it('accepts an agentId listed in agentIds', async () => {
    const socket = await t.client('bot', { sub: 'u', agentIds: ['bot', 'other'] });
    socket.disconnect();
  });

  it('maps ADMIN to clientId "admin", for sub "admin" and any other sub', async () => {
    for (const sub of ['admin', 'alice']) {
      const socket = clientSocket(t.url, { token: mintToken({ sub, roles: ['ADMIN'] }), agentId: 'bot' });
      const session = nextEvent<{ clientId: string }>(socket, 'session');
      await connected(socket);
      expect((await session).clientId).toBe('admin');
      socket.disconnect();
    }
  });

  it('refuses a deactivated sub, and accepts it again after activation', async () => {
    await t.hub.relay.service.sessions.deactivateUser('gone');
    expect(await refused({ token: mintToken({ sub: 'gone' }), agentId: 'bot' })).toEqual({ code: 'USER_DEACTIVATED', retryable: false });
    await t.hub.relay.service.sessions.activateUser('gone');
    (await t.client('bot', { sub: 'gone' })).disconnect();
  });

  it('closes the transport of a refused peer and never runs a connection handler', async () => {
    const connections = jest.fn();
    t.hub.relay.namespaces.client.on('connection', connections);
    const agent = await t.agent('spy-bot');
    const witness = await t.client('spy-bot', { sub: 'witness' });
    const witnessGot = jest.fn();
    witness.onAny(witnessGot);
    connections.mockClear();

    // Broadcast to every client of the bot for as long as the bad handshakes are in progress.
    let broadcasting = true;
    const broadcasts = (async () => {
      while (broadcasting) await agent.reply('*', 'to everyone');
    })();
    const received = jest.fn();
    const refusals = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const bad = clientSocket(t.url, { token: mintToken({ sub: `bad-${i}`, expiresIn: -60 }), agentId: 'spy-bot' });
        bad.onAny(received);
        return refusal(bad);
      }),
    );
    broadcasting = false;
    await broadcasts;

    expect(refusals.every((r) => r.code === 'TOKEN_EXPIRED')).toBe(true);
    expect(witnessGot).toHaveBeenCalled(); // the broadcasts really happened
    expect(received).not.toHaveBeenCalled();
    expect(connections).not.toHaveBeenCalled();
    t.hub.relay.namespaces.client.off('connection', connections);
    witness.disconnect();
  });

  it('closes the transport after a refusal even when the peer keeps it open', async () => {
    // A raw engine.io websocket: unlike socket.io-client, it does not hang up by itself.
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/socket.io/?EIO=4&transport=websocket`);
    const frames: string[] = [];
    ws.on('message', (frame) => {
      frames.push(frame.toString());
      if (frame.toString().startsWith('0{')) ws.send(`40${Namespaces.client},{"token":"bad","agentId":"bot"}`);
    });
    const code = await new Promise<number>((resolve) => ws.on('close', resolve));
    expect(frames.some((f) => f.startsWith(`44${Namespaces.client},`) && f.includes('"TOKEN_INVALID"'))).toBe(true);
    expect(code).toBeGreaterThan(0);
  });
});

describe('token settings', () => {
  it('verifies JWT_PREVIOUS_SECRETS, issuer and audience, and JWT_REQUIRE_EXP=false', async () => {
    const previous = 'previous-secret-0123456789abcdef';
    const h = await startHub({
      JWT_PREVIOUS_SECRETS: previous,
      JWT_ISSUER: 'https://issuer.example',
      JWT_AUDIENCE: 'relay',
      JWT_REQUIRE_EXP: 'false',
    });
    try {
      const ok = { sub: 'u', iss: 'https://issuer.example', aud: 'relay' };
      (await h.client('bot', mintToken(ok, previous))).disconnect();
      (await h.client('bot', mintToken({ ...ok, expiresIn: null }))).disconnect();
      for (const bad of [{ ...ok, iss: 'https://evil.example' }, { ...ok, aud: 'other' }, { sub: 'u' }]) {
        expect(await refusal(clientSocket(h.url, { token: mintToken(bad), agentId: 'bot' }))).toEqual({
          code: 'TOKEN_INVALID',
          retryable: false,
        });
      }
    } finally {
      await h.close();
    }
  });

  it('rate-limits failed handshakes per address with RATE_LIMITED', async () => {
    const h = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '3' });
    try {
      for (let i = 0; i < 3; i++) {
        expect((await refusal(clientSocket(h.url, { token: 'bad', agentId: 'bot' }))).code).toBe('TOKEN_INVALID');
      }
      // Unverified credentials wait out the window; verified ones are not locked out by others' failures.
      expect(await refusal(clientSocket(h.url, { token: 'bad', agentId: 'bot' }))).toEqual({ code: 'RATE_LIMITED', retryable: true });
      expect((await refusal(agentSocket(h.url, { apiKey: 'wrong', agentId: 'bot' }))).code).toBe('RATE_LIMITED');
      (await connected(clientSocket(h.url, { token: mintToken({ sub: 'u' }), agentId: 'bot' }))).disconnect();
      (await connected(agentSocket(h.url, { apiKey: TEST_AGENT_KEY, agentId: 'bot' }))).disconnect();
    } finally {
      await h.close();
    }
  });

  it('refuses an Origin outside CORS_ORIGINS on websocket and polling', async () => {
    const h = await startHub({ CORS_ORIGINS: 'https://good.example' });
    try {
      const token = mintToken({ sub: 'u' });
      for (const transports of [['websocket'], ['polling']] as const) {
        const bad = clientSocket(h.url, { token, agentId: 'bot' }, { origin: 'https://evil.example', transports: [...transports] });
        const badClosed = engineClosed(bad);
        expect(await refusal(bad)).toEqual({ code: 'ORIGIN_NOT_ALLOWED', retryable: false });
        const good = await h.client('bot', { sub: 'u' }, { origin: 'https://good.example', transports: [...transports] });
        const goodClosed = engineClosed(good);
        good.disconnect();
        // A polling client finishes its last request after disconnect(); let it, before the hub goes.
        await Promise.all([badClosed, goodClosed]);
      }
    } finally {
      await h.close();
    }
  });
});

it('uses namespaces from the protocol module', () => {
  expect(Namespaces).toEqual({ agent: '/ws/agent', client: '/ws/client', operator: '/ws/operator' });
});

/** Resolves when the client's engine.io connection has closed. */
function engineClosed(socket: Socket): Promise<void> {
  return new Promise((resolve) => socket.io.engine.once('close', () => resolve()));
}
