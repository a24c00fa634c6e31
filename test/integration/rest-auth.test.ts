import type { Socket } from 'socket.io-client';
import type { Client } from '../../src/client/client';
import { clientSocket, connected, nextEvent, refusal, startHub, type TestHub } from '../helpers/hub';
import { mintToken, testJwtService } from '../helpers/tokens';
import { adminToken, anonymousClient, api, apiKeyClient, bearerClient, createKey } from './rest-client.helper';

const jwt = testJwtService();

describe('REST auth, API keys, embed tokens, agent messages (generated client, live hub)', () => {
  let h: TestHub;
  let admin: Client;
  beforeEach(async () => {
    h = await startHub();
    admin = bearerClient(h.url, adminToken());
  });
  afterEach(() => h.close());

  describe('me', () => {
    it('returns the identity the handshake would derive', async () => {
      const user = await api.me({ client: bearerClient(h.url, mintToken({ sub: 'u1', email: 'ann@example.com', expiresIn: 600 })) });
      expect(user.response!.status).toBe(200);
      expect(user.data).toEqual({
        success: true,
        data: { clientId: 'u1', sub: 'u1', email: 'ann@example.com', roles: [], tokenExpiresAt: expect.any(String) },
      });
      expect(Math.abs(Date.parse(user.data!.data.tokenExpiresAt!) - (Date.now() + 600_000))).toBeLessThan(5000);
      const root = await api.me({ client: admin });
      expect(root.data!.data).toMatchObject({ clientId: 'admin', sub: 'root', roles: ['ADMIN'] });
    });

    it('refuses missing and reserved tokens with the handshake codes, a malformed header with its own', async () => {
      expect((await api.me({ client: anonymousClient(h.url) })).error).toMatchObject({ status: 401, code: 'TOKEN_REQUIRED' });
      const basic = await api.me({ client: anonymousClient(h.url), headers: { authorization: 'Basic abc' } });
      expect(basic.error).toMatchObject({ status: 401, code: 'AUTHORIZATION_MALFORMED' });
      const reserved = await api.me({ client: bearerClient(h.url, mintToken({ sub: 'admin' })) });
      expect(reserved.error).toMatchObject({ status: 401, code: 'SUB_RESERVED' });
      const noSub = await api.me({ client: bearerClient(h.url, mintToken({})) });
      expect(noSub.error).toMatchObject({ status: 401, code: 'SUB_REQUIRED' });
    });
  });

  describe('API keys', () => {
    it('creates a key (201, secret shown once), lists, gets and deletes it; the secret is never listed', async () => {
      const created = await api.createApiKey({
        client: admin,
        body: { name: 'backend', scopes: ['embed:mint', 'embed:mint'], agentIds: ['support-bot', 'support-bot'] },
      });
      expect(created.response!.status).toBe(201);
      const key = created.data!.data;
      expect(key).toEqual({
        id: expect.any(String),
        name: 'backend',
        scopes: ['embed:mint'],
        prefix: key.key.slice(0, 9),
        agentIds: ['support-bot'],
        adminRecipient: false,
        createdAt: expect.any(String),
        key: expect.stringMatching(/^rk_[\w-]{43}$/),
      });
      const listed = await api.getApiKeys({ client: admin });
      expect(listed.data!.meta).toEqual({ total: 1, lastPage: 1, currentPage: 1, perPage: 20 });
      expect(listed.data!.data[0]).not.toHaveProperty('key');
      expect(JSON.stringify(listed.data)).not.toContain(key.key);
      const got = await api.getApiKeyById({ client: admin, path: { id: key.id } });
      expect(got.data!.data).toEqual({
        id: key.id,
        name: 'backend',
        scopes: ['embed:mint'],
        prefix: key.prefix,
        agentIds: ['support-bot'],
        adminRecipient: false,
        createdAt: key.createdAt,
      });

      await api.mintEmbedToken({ client: apiKeyClient(h.url, key.key) });
      const used = await api.getApiKeyById({ client: admin, path: { id: key.id } });
      expect(Date.parse(used.data!.data.lastUsedAt!)).toBeGreaterThanOrEqual(Date.parse(key.createdAt));

      const deleted = await api.deleteApiKey({ client: admin, path: { id: key.id } });
      expect(deleted.data!.data.id).toBe(key.id);
      expect((await api.getApiKeyById({ client: admin, path: { id: key.id } })).response!.status).toBe(404);
      expect((await api.deleteApiKey({ client: admin, path: { id: key.id } })).response!.status).toBe(404);
      const revoked = await api.mintEmbedToken({ client: apiKeyClient(h.url, key.key) });
      expect(revoked.error).toMatchObject({ status: 401, code: 'API_KEY_INVALID' });
    });

    it('filters and pages keys', async () => {
      await createKey(h.url, ['embed:mint']);
      await createKey(h.url, ['messages:publish']);
      await createKey(h.url, ['embed:mint', 'messages:publish']);
      const minting = await api.getApiKeys({ client: admin, query: { scope: 'embed:mint', perPage: 1 } });
      expect(minting.data!.meta).toEqual({ total: 2, lastPage: 2, currentPage: 1, perPage: 1 });
      const bad = await api.getApiKeys({ client: admin, query: { scope: 'root' as 'embed:mint' } });
      expect(bad.error!.errors!.map((e) => e.path)).toEqual(['query.scope']);
    });

    it('answers 400 for unknown or missing scopes and a missing name', async () => {
      const unknown = await api.createApiKey({ client: admin, body: { name: 'k', scopes: ['admin' as 'embed:mint'], agentIds: ['*'] } });
      expect(unknown.response!.status).toBe(400);
      expect(unknown.error!.errors!.map((e) => e.path)).toEqual(['body.scopes.0']);
      const none = await api.createApiKey({ client: admin, body: { name: 'k', scopes: [], agentIds: ['*'] } });
      expect(none.error!.errors!.map((e) => e.path)).toEqual(['body.scopes']);
      const noName = await api.createApiKey({
        client: admin,
        body: { scopes: ['embed:mint'], agentIds: ['*'] } as unknown as api.CreateApiKeyDto,
      });
      expect(noName.error!.errors!.map((e) => e.path)).toEqual(['body.name']);
    });

    it('enforces scopes: 401 without or with an unknown key, 403 without the scope, 201 with it', async () => {
      const publisher = await createKey(h.url, ['messages:publish']);
      const minter = await createKey(h.url, ['embed:mint']);
      const none = await api.mintEmbedToken({ client: anonymousClient(h.url) });
      expect(none.response!.status).toBe(401);
      expect(none.error).toMatchObject({ code: 'API_KEY_REQUIRED' });
      const unknown = await api.mintEmbedToken({ client: apiKeyClient(h.url, `${minter}x`) });
      expect(unknown.error).toMatchObject({ status: 401, code: 'API_KEY_INVALID' });
      const wrongScope = await api.mintEmbedToken({ client: apiKeyClient(h.url, publisher) });
      expect(wrongScope.response!.status).toBe(403);
      expect(wrongScope.error).toMatchObject({ code: 'SCOPE_REQUIRED', detail: expect.stringContaining('embed:mint') });
      expect((await api.mintEmbedToken({ client: apiKeyClient(h.url, minter) })).response!.status).toBe(201);
      const publishWithMinter = await api.publishAgentMessage({
        client: apiKeyClient(h.url, minter),
        path: { agentId: 'bot' },
        body: { to: '*', text: 'hi' },
      });
      expect(publishWithMinter.error).toMatchObject({ status: 403, code: 'SCOPE_REQUIRED' });
      // An admin JWT is not an API key.
      const jwtAsKey = await api.mintEmbedToken({ client: bearerClient(h.url, adminToken()) });
      expect(jwtAsKey.response!.status).toBe(401);
    });
  });

  describe('mintEmbedToken', () => {
    let minter: Client;
    beforeEach(async () => {
      minter = apiKeyClient(h.url, await createKey(h.url, ['embed:mint']));
    });

    it('mints a 15m anonymous token by default, with or without a body, that works at /ws/client', async () => {
      for (const res of [await api.mintEmbedToken({ client: minter }), await api.mintEmbedToken({ client: minter, body: {} })]) {
        expect(res.response!.status).toBe(201);
        const { token, expiresAt } = res.data!.data;
        expect(Math.abs(Date.parse(expiresAt) - (Date.now() + 15 * 60_000))).toBeLessThan(5000);
        const verified = jwt.verify(token);
        expect(verified).toMatchObject({
          ok: true,
          identity: { sub: expect.stringMatching(/^anon_[0-9a-f-]{36}$/), isAdmin: false, roles: [] },
        });
        const socket = clientSocket(h.url, { token, agentId: 'bot' });
        const session = nextEvent<{ clientId: string; tokenExpiresAt: string }>(socket, 'session');
        await connected(socket);
        expect((await session).tokenExpiresAt).toBe(new Date(Date.parse(expiresAt)).toISOString());
        socket.disconnect();
      }
    });

    it('honours expiresIn up to MINT_MAX_EXPIRES_IN, sub and email; never honours roles', async () => {
      const res = await api.mintEmbedToken({
        client: minter,
        body: { expiresIn: '24h', sub: 'u1', email: 'ann@example.com', roles: ['ADMIN'] } as api.MintEmbedTokenDto,
      });
      expect(res.response!.status).toBe(201);
      expect(Math.abs(Date.parse(res.data!.data.expiresAt) - (Date.now() + 86_400_000))).toBeLessThan(5000);
      const me = await api.me({ client: bearerClient(h.url, res.data!.data.token) });
      expect(me.data!.data).toMatchObject({ clientId: 'u1', sub: 'u1', email: 'ann@example.com', roles: [] });
      expect((await api.getUsers({ client: bearerClient(h.url, res.data!.data.token) })).response!.status).toBe(403);
    });

    it('answers 400 for expiresIn above the maximum or malformed, sub "admin", bad agentIds', async () => {
      const cases: [unknown, string][] = [
        // The default MINT_MAX_EXPIRES_IN is 24h (docs/rest.md, "Minting embed tokens": avoid 30d for end-user embeds).
        [{ expiresIn: '30d' }, 'body.expiresIn'],
        [{ expiresIn: '25h' }, 'body.expiresIn'],
        [{ expiresIn: '15x' }, 'body.expiresIn'],
        [{ expiresIn: '0m' }, 'body.expiresIn'],
        [{ expiresIn: 15 }, 'body.expiresIn'],
        [{ sub: 'admin' }, 'body.sub'],
        [{ sub: '' }, 'body.sub'],
        [{ agentIds: ['no spaces'] }, 'body.agentIds.0'],
        [{ email: 'nope' }, 'body.email'],
      ];
      for (const [body, path] of cases) {
        const res = await api.mintEmbedToken({ client: minter, body: body as api.MintEmbedTokenDto });
        expect({ body, status: res.response!.status, paths: res.error?.errors?.map((e) => e.path) }).toEqual({
          body,
          status: 400,
          paths: [path],
        });
      }
    });

    it('restricts the bots a token may chat with through agentIds', async () => {
      const res = await api.mintEmbedToken({ client: minter, body: { sub: 'u1', agentIds: ['support'] } });
      const { token } = res.data!.data;
      const ok = await connected(clientSocket(h.url, { token, agentId: 'support' }));
      expect(ok.connected).toBe(true);
      ok.disconnect();
      expect(await refusal(clientSocket(h.url, { token, agentId: 'sales' }))).toEqual({ code: 'AGENT_NOT_ALLOWED', retryable: false });
    });

    it('caps the lifetime at a configured MINT_MAX_EXPIRES_IN', async () => {
      const small = await startHub({ MINT_MAX_EXPIRES_IN: '1h' });
      try {
        const key = apiKeyClient(small.url, await createKey(small.url, ['embed:mint']));
        expect((await api.mintEmbedToken({ client: key, body: { expiresIn: '60m' } })).response!.status).toBe(201);
        const tooLong = await api.mintEmbedToken({ client: key, body: { expiresIn: '61m' } });
        expect(tooLong.error!.errors).toEqual([{ path: 'body.expiresIn', message: 'must be at most 1h (MINT_MAX_EXPIRES_IN)' }]);
      } finally {
        await small.close();
      }
    });
  });

  describe('publishAgentMessage', () => {
    let publisher: Client;
    beforeEach(async () => {
      publisher = apiKeyClient(h.url, await createKey(h.url, ['messages:publish']));
    });

    it('reaches every socket of the clientId like a reply (202 with id and ts), and everyone with "*"', async () => {
      const tabs: Socket[] = [await h.client('bot', { sub: 'u1' }), await h.client('bot', { sub: 'u1' })];
      const other = await h.client('bot', { sub: 'u2' });
      const elsewhere = await h.client('other-bot', { sub: 'u1' });
      const tabMessages = tabs.map((s) => nextEvent(s, 'message'));
      const otherFirst = nextEvent(other, 'message');
      const elsewhereFirst = nextEvent(elsewhere, 'message');

      const res = await api.publishAgentMessage({
        client: publisher,
        path: { agentId: 'bot' },
        body: { to: 'u1', text: 'Your order shipped', data: { orderId: 'o1' }, replyTo: 'm1' },
      });
      expect(res.response!.status).toBe(202);
      const { id, ts } = res.data!.data;
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
      for (const message of await Promise.all(tabMessages)) {
        expect(message).toEqual({
          id,
          ts,
          agentId: 'bot',
          author: 'agent',
          text: 'Your order shipped',
          data: { orderId: 'o1' },
          replyTo: 'm1',
        });
      }

      // u2 and the other bot's client get the broadcast as their first message: the first publish never reached them.
      const broadcast = await api.publishAgentMessage({
        client: publisher,
        path: { agentId: 'bot' },
        body: { to: '*', text: 'Maintenance at noon' },
      });
      expect(await otherFirst).toEqual({
        id: broadcast.data!.data.id,
        ts: broadcast.data!.data.ts,
        agentId: 'bot',
        author: 'agent',
        text: 'Maintenance at noon',
      });
      const onOtherBot = await api.publishAgentMessage({
        client: publisher,
        path: { agentId: 'other-bot' },
        body: { to: 'u1', text: 'other' },
      });
      expect(await elsewhereFirst).toMatchObject({ id: onOtherBot.data!.data.id, text: 'other' });
    });

    it('answers 400 for a bad agentId, body or too deeply nested data and 413 for text above MAX_MESSAGE_BYTES', async () => {
      const badAgent = await api.publishAgentMessage({ client: publisher, path: { agentId: 'no spaces' }, body: { to: '*', text: 'x' } });
      expect(badAgent.error!.errors!.map((e) => e.path)).toEqual(['path.agentId']);
      const noText = await api.publishAgentMessage({
        client: publisher,
        path: { agentId: 'bot' },
        body: { to: '*' } as api.AgentMessageDto,
      });
      expect(noText.error!.errors!.map((e) => e.path)).toEqual(['body.text']);
      const badData = await api.publishAgentMessage({
        client: publisher,
        path: { agentId: 'bot' },
        body: { to: '*', text: 'x', data: [1] as unknown as Record<string, unknown> },
      });
      expect(badData.response!.status).toBe(400);
      let deep: Record<string, unknown> = {};
      for (let i = 0; i < 100; i++) deep = { deeper: deep };
      const tooDeep = await api.publishAgentMessage({
        client: publisher,
        path: { agentId: 'bot' },
        body: { to: '*', text: 'x', data: deep },
      });
      expect(tooDeep.error).toMatchObject({
        status: 400,
        code: 'VALIDATION_FAILED',
        errors: [{ path: 'body.data', message: 'nests deeper than 64 levels' }],
      });
      const big = await api.publishAgentMessage({
        client: publisher,
        path: { agentId: 'bot' },
        body: { to: '*', text: 'x'.repeat(65_537) },
      });
      expect(big.response!.status).toBe(413);
      expect(big.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    });
  });
});
