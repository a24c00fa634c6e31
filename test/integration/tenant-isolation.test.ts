import type { Socket } from 'socket.io-client';
import type { RefreshAck } from '../../src/protocol';
import { clientSocket, connected, refusal, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { testJwtService } from '../helpers/tokens';
import { adminToken, api, apiKeyClient, bearerClient } from './rest-client.helper';

/**
 * Tenancy (docs/rest.md, API keys): a managed API key acts only for the bots in its agentIds on
 * every scope it holds, and a token it mints stays within them.
 */

const jwt = testJwtService();
const conversation = (agentId: string, clientId: string) => ({ path: { agentId, clientId } });

async function createBound(url: string, scopes: api.ApiKeyScope[], agentIds: string[]): Promise<string> {
  const res = await api.createApiKey({ client: bearerClient(url, adminToken()), body: { name: 'tenant', scopes, agentIds } });
  if (res.response!.status !== 201) throw new Error(`createApiKey failed: ${res.response!.status} ${JSON.stringify(res.error)}`);
  return res.data!.data.key;
}

/** The other tenant's conversation, as an ADMIN reads it. */
async function texts(url: string, agentId: string, clientId: string): Promise<string[]> {
  const res = await api.getConversationMessages({ client: bearerClient(url, adminToken()), ...conversation(agentId, clientId) });
  expect(res.response!.status).toBe(200);
  return res.data!.data.map((m) => m.text);
}

function expectNotAllowed(res: { response?: Response; error?: unknown }): void {
  expect(res.response!.status).toBe(403);
  expect(res.response!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.error).toMatchObject({ status: 403, code: 'AGENT_NOT_ALLOWED' });
}

/** What a bound key may and may not do, on `use` (another replica, or the same as `setup`). */
function tenancyCases(hubs: () => { setup: TestHub; use: TestHub }): void {
  it('a history key bound to tenant-a reads and deletes tenant-a only; tenant-b is refused and intact', async () => {
    const { setup, use } = hubs();
    const a = await setup.agent('tenant-a');
    const b = await setup.agent('tenant-b');
    await a.reply('a-user', 'for a');
    await b.reply('b-user', 'secret of b');
    const key = apiKeyClient(use.url, await createBound(setup.url, ['history:read', 'history:write'], ['tenant-a']));

    expectNotAllowed(await api.getConversationMessages({ client: key, ...conversation('tenant-b', 'b-user') }));
    expectNotAllowed(await api.deleteConversation({ client: key, ...conversation('tenant-b', 'b-user') }));
    expect(await texts(setup.url, 'tenant-b', 'b-user')).toEqual(['secret of b']);

    const own = await api.getConversationMessages({ client: key, ...conversation('tenant-a', 'a-user') });
    expect(own.data!.data.map((m) => m.text)).toEqual(['for a']);
    expect((await api.deleteConversation({ client: key, ...conversation('tenant-a', 'a-user') })).response!.status).toBe(204);
    expect(await texts(setup.url, 'tenant-a', 'a-user')).toEqual([]);
  });

  it('an embed:mint key bound to tenant-a cannot mint for tenant-b; its default token opens tenant-a only', async () => {
    const { setup, use } = hubs();
    const minter = apiKeyClient(use.url, await createBound(setup.url, ['embed:mint'], ['tenant-a']));

    const foreign = await api.mintEmbedToken({ client: minter, body: { sub: 'b-victim', agentIds: ['tenant-b'] } });
    expectNotAllowed(foreign);
    const mixed = await api.mintEmbedToken({ client: minter, body: { sub: 'b-victim', agentIds: ['tenant-a', 'tenant-b'] } });
    expectNotAllowed(mixed);

    const minted = await api.mintEmbedToken({ client: minter, body: { sub: 'a-user' } });
    expect(minted.response!.status).toBe(201);
    const { token } = minted.data!.data;
    expect(jwt.verify(token)).toMatchObject({ ok: true, identity: { sub: 'a-user', agentIds: ['tenant-a'] } });
    (await connected(clientSocket(use.url, { token, agentId: 'tenant-a' }))).disconnect();
    expect(await refusal(clientSocket(use.url, { token, agentId: 'tenant-b' }))).toEqual({ code: 'AGENT_NOT_ALLOWED', retryable: false });
    expect(await refusal(clientSocket(setup.url, { token, agentId: 'tenant-b' }))).toEqual({ code: 'AGENT_NOT_ALLOWED', retryable: false });

    const narrowed = await api.mintEmbedToken({ client: minter, body: { sub: 'a-user', agentIds: ['tenant-a'] } });
    expect(jwt.verify(narrowed.data!.data.token)).toMatchObject({ ok: true, identity: { agentIds: ['tenant-a'] } });
  });
}

describe('tenant isolation of bound API keys (one replica)', () => {
  let h: TestHub;
  beforeEach(async () => {
    h = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '0' });
  });
  afterEach(() => h.close());

  tenancyCases(() => ({ setup: h, use: h }));

  it('a key bound to a prefix mints a token carrying the pattern, which the handshake and auth:refresh match as a pattern', async () => {
    const minter = apiKeyClient(h.url, await createBound(h.url, ['embed:mint'], ['support-eu-*']));
    const minted = await api.mintEmbedToken({ client: minter, body: { sub: 'eu-user' } });
    const { token } = minted.data!.data;
    expect(jwt.verify(token)).toMatchObject({ ok: true, identity: { agentIds: ['support-eu-*'] } });

    const socket = await connected(clientSocket(h.url, { token, agentId: 'support-eu-fr' }));
    try {
      const again = await api.mintEmbedToken({ client: minter, body: { sub: 'eu-user' } });
      const ack = (await socket.timeout(5000).emitWithAck('auth:refresh', { token: again.data!.data.token })) as RefreshAck;
      expect(ack).toMatchObject({ ok: true });
    } finally {
      socket.disconnect();
    }
    for (const agentId of ['support-us', 'support-eu', 'support-e']) {
      expect(await refusal(clientSocket(h.url, { token, agentId }))).toEqual({ code: 'AGENT_NOT_ALLOWED', retryable: false });
    }

    expect((await api.mintEmbedToken({ client: minter, body: { agentIds: ['support-eu-de'] } })).response!.status).toBe(201);
    expectNotAllowed(await api.mintEmbedToken({ client: minter, body: { agentIds: ['support-us'] } }));
  });

  it('auth:refresh with a token whose pattern leaves out the session bot is refused', async () => {
    const narrow = apiKeyClient(h.url, await createBound(h.url, ['embed:mint'], ['support-us-*']));
    const wide = apiKeyClient(h.url, await createBound(h.url, ['embed:mint'], ['support-eu-*']));
    const first = await api.mintEmbedToken({ client: wide, body: { sub: 'eu-user' } });
    const socket: Socket = await connected(clientSocket(h.url, { token: first.data!.data.token, agentId: 'support-eu-fr' }));
    try {
      const other = await api.mintEmbedToken({ client: narrow, body: { sub: 'eu-user' } });
      const ack = (await socket.timeout(5000).emitWithAck('auth:refresh', { token: other.data!.data.token })) as RefreshAck;
      expect(ack).toMatchObject({ ok: false, error: { code: 'TOKEN_INVALID' } });
    } finally {
      socket.disconnect();
    }
  });

  it('requires agentIds for every scope, and ["*"] acts for every bot', async () => {
    const admin = bearerClient(h.url, adminToken());
    for (const scope of ['agent:connect', 'messages:publish', 'history:read', 'history:write', 'embed:mint'] as const) {
      const missing = await api.createApiKey({ client: admin, body: { name: 'k', scopes: [scope] } as api.CreateApiKeyDto });
      expect({ scope, status: missing.response!.status, error: missing.error }).toEqual({
        scope,
        status: 400,
        error: expect.objectContaining({ code: 'VALIDATION_FAILED', errors: [expect.objectContaining({ path: 'body.agentIds' })] }),
      });
    }
    expect((await api.getApiKeys({ client: admin })).data!.meta.total).toBe(0);

    const b = await h.agent('tenant-b');
    await b.reply('b-user', 'hello b');
    const every = apiKeyClient(h.url, await createBound(h.url, ['history:read', 'embed:mint'], ['*']));
    expect((await api.getConversationMessages({ client: every, ...conversation('tenant-b', 'b-user') })).data!.data).toHaveLength(1);
    const minted = await api.mintEmbedToken({ client: every, body: { sub: 'anyone', agentIds: ['tenant-b'] } });
    expect(minted.response!.status).toBe(201);
    const open = await api.mintEmbedToken({ client: every, body: { sub: 'anyone' } });
    (await connected(clientSocket(h.url, { token: open.data!.data.token, agentId: 'any-bot' }))).disconnect();
  });

  it('a key stored before keys were bound (no agentIds) keeps acting for every bot and is shown as ["*"]', async () => {
    const created = await api.createApiKey({
      client: bearerClient(h.url, adminToken()),
      body: { name: 'old', scopes: ['history:read', 'embed:mint'], agentIds: ['*'] },
    });
    const { id, key } = created.data!.data;
    // Rewritten as a record of before: the same key without agentIds.
    const record = (await h.hub.store.apiKeys.get(id))!;
    const { agentIds: _bound, ...legacy } = record;
    await h.hub.store.apiKeys.delete(id);
    await h.hub.store.apiKeys.create(legacy);

    const shown = await api.getApiKeyById({ client: bearerClient(h.url, adminToken()), path: { id } });
    expect(shown.data!.data.agentIds).toEqual(['*']);
    const b = await h.agent('tenant-b');
    await b.reply('b-user', 'hello b');
    const old = apiKeyClient(h.url, key);
    expect((await api.getConversationMessages({ client: old, ...conversation('tenant-b', 'b-user') })).response!.status).toBe(200);
    expect((await api.mintEmbedToken({ client: old, body: { agentIds: ['tenant-b'] } })).response!.status).toBe(201);
  });

  it('ADMIN bearer tokens keep reading and deleting every bot', async () => {
    const b = await h.agent('tenant-b');
    await b.reply('b-user', 'hello b');
    const admin = bearerClient(h.url, adminToken());
    expect(await texts(h.url, 'tenant-b', 'b-user')).toEqual(['hello b']);
    expect((await api.deleteConversation({ client: admin, ...conversation('tenant-b', 'b-user') })).response!.status).toBe(204);
  });
});

describe('tenant isolation of bound API keys (two hubs over Redis: key created on one, used on the other)', () => {
  let redis: TestRedis;
  let a: TestHub;
  let b: TestHub;
  beforeAll(async () => {
    redis = await startRedis();
    a = await startHub({ REDIS_URL: redis.url, HANDSHAKE_FAILURES_PER_MIN: '0' });
    b = await startHub({ REDIS_URL: redis.url, HANDSHAKE_FAILURES_PER_MIN: '0' });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.close();
  });

  tenancyCases(() => ({ setup: a, use: b }));
});
