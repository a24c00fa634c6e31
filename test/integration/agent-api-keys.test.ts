import { RelayAgent, RelayAgentError } from '../../src/sdk/agent';
import { agentSocket, connected, nextEvent, refusal, startHub, type TestHub } from '../helpers/hub';
import { startRedis, type TestRedis } from '../helpers/redis-server';
import { TEST_AGENT_KEY } from '../helpers/tokens';
import { adminToken, api, apiKeyClient, bearerClient, createKeyRecord } from './rest-client.helper';
import { sleep } from '../helpers/wait';

/** docs/rest.md ("API keys"): managed API keys bound to bots, at /ws/agent and for publishing. */
describe('bot-bound agent API keys (one hub)', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '0' });
  });
  afterAll(() => t.close());

  const runtime = (apiKey: string, agentId: string) => agentSocket(t.url, { apiKey, agentId });

  it('accepts a key bound to bot-a for bot-a only, and prefixes ending in * for their bots', async () => {
    const { key } = await createKeyRecord(t.url, { scopes: ['agent:connect'], agentIds: ['bot-a', 'sales-*'] });
    for (const agentId of ['bot-a', 'sales-eu', 'sales-']) (await connected(runtime(key, agentId))).disconnect();
    for (const agentId of ['bot-b', 'bot-a2', 'salesx']) {
      expect(await refusal(runtime(key, agentId))).toEqual({ code: 'AGENT_NOT_ALLOWED', retryable: false });
    }
  });

  it('refuses keys without the agent:connect scope, unknown keys, and a non-string key', async () => {
    const { key } = await createKeyRecord(t.url, { scopes: ['embed:mint', 'messages:publish'], agentIds: ['*'] });
    for (const apiKey of [key, `${key}x`, 'rk_unknown', 42]) {
      expect((await refusal(agentSocket(t.url, { apiKey, agentId: 'bot-a' }))).code).toBe('API_KEY_INVALID');
    }
  });

  it('reads the store at most once per handshake, and not at all for a shared key', async () => {
    const { key } = await createKeyRecord(t.url, { scopes: ['agent:connect'], agentIds: ['bot-a'] });
    const lookups = jest.spyOn(t.hub.store.apiKeys, 'findByHash');
    try {
      (await connected(runtime(TEST_AGENT_KEY, 'bot-a'))).disconnect();
      expect(lookups).toHaveBeenCalledTimes(0);
      (await connected(runtime(key, 'bot-a'))).disconnect();
      expect(lookups).toHaveBeenCalledTimes(1);
      await refusal(runtime(key, 'bot-b'));
      await refusal(runtime('rk_wrong', 'bot-a'));
      expect(lookups).toHaveBeenCalledTimes(3);
    } finally {
      lookups.mockRestore();
    }
  });

  it('requires agentIds with every scope, as agentIds or prefixes', async () => {
    const admin = bearerClient(t.url, adminToken());
    const missing = await api.createApiKey({ client: admin, body: { name: 'k', scopes: ['agent:connect'] } as api.CreateApiKeyDto });
    expect(missing.error).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ path: 'body.agentIds' }] });
    const bad = await api.createApiKey({
      client: admin,
      body: { name: 'k', scopes: ['messages:publish'], agentIds: ['ok', 'no spaces*'] },
    });
    expect(bad.error).toMatchObject({ status: 400, errors: [{ path: 'body.agentIds.1' }] });
    const mintOnly = await api.createApiKey({ client: admin, body: { name: 'k', scopes: ['embed:mint'] } as api.CreateApiKeyDto });
    expect(mintOnly.error).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ path: 'body.agentIds' }] });
    const mintBound = await api.createApiKey({ client: admin, body: { name: 'k', scopes: ['embed:mint'], agentIds: ['bot-a'] } });
    expect(mintBound.response!.status).toBe(201);
    expect(mintBound.data!.data).toMatchObject({ adminRecipient: false, agentIds: ['bot-a'] });
  });

  it('publishes only to the bound bots, and to admin only with adminRecipient', async () => {
    const { key } = await createKeyRecord(t.url, { scopes: ['messages:publish'], agentIds: ['bot-a'] });
    const client = apiKeyClient(t.url, key);
    const publish = (agentId: string, to: string) => api.publishAgentMessage({ client, path: { agentId }, body: { to, text: 'hi' } });
    expect((await publish('bot-a', 'user-1')).response!.status).toBe(202);
    expect((await publish('bot-a', '*')).response!.status).toBe(202);
    expect((await publish('bot-b', 'user-1')).error).toMatchObject({ status: 403, code: 'AGENT_NOT_ALLOWED' });
    expect((await publish('bot-a', 'admin')).error).toMatchObject({ status: 403, code: 'RECIPIENT_NOT_ALLOWED' });

    const withAdmin = await createKeyRecord(t.url, { scopes: ['messages:publish'], agentIds: ['bot-*'], adminRecipient: true });
    const admin = await t.client('bot-a', { sub: 'root', roles: ['ADMIN'] });
    const delivered = nextEvent(admin, 'message');
    const res = await api.publishAgentMessage({
      client: apiKeyClient(t.url, withAdmin.key),
      path: { agentId: 'bot-a' },
      body: { to: 'admin', text: 'to admins' },
    });
    expect(res.response!.status).toBe(202);
    expect(await delivered).toMatchObject({ text: 'to admins' });
  });
});

describe('AGENT_SHARED_KEYS_ENABLED=false', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ AGENT_SHARED_KEYS_ENABLED: 'false', HANDSHAKE_FAILURES_PER_MIN: '0' });
  });
  afterAll(() => t.close());

  it('refuses the shared key and accepts a managed one', async () => {
    expect(await refusal(agentSocket(t.url, { apiKey: TEST_AGENT_KEY, agentId: 'bot-a' }))).toEqual({
      code: 'API_KEY_INVALID',
      retryable: false,
    });
    const { key } = await createKeyRecord(t.url, { scopes: ['agent:connect'], agentIds: ['bot-a'] });
    (await connected(agentSocket(t.url, { apiKey: key, agentId: 'bot-a' }))).disconnect();
  });
});

describe('revoking a managed key ends its runtimes on every replica', () => {
  let redis: TestRedis;
  let a: TestHub;
  let b: TestHub;
  beforeAll(async () => {
    redis = await startRedis();
    a = await startHub({ REDIS_URL: redis.url });
    b = await startHub({ REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.close();
  });

  it('deleteApiKey on replica A closes the runtime on replica B with API_KEY_REVOKED; the SDK stops reconnecting', async () => {
    const { id, key } = await createKeyRecord(a.url, { scopes: ['agent:connect'], agentIds: ['bot-a'] });
    const other = await createKeyRecord(a.url, { scopes: ['agent:connect'], agentIds: ['bot-a'] });
    const backoff = { baseMs: 10, capMs: 20 };
    const revoked = new RelayAgent({ url: b.url, apiKey: key, agentId: 'bot-a', backoff });
    const survivor = new RelayAgent({ url: b.url, apiKey: other.key, agentId: 'bot-a', backoff });
    const errors: Error[] = [];
    revoked.on('error', (err) => errors.push(err));
    survivor.on('error', (err) => errors.push(err));
    try {
      await revoked.connect();
      await survivor.connect();
      const disconnected = new Promise<string>((resolve) => revoked.once('disconnect', resolve));
      const res = await api.deleteApiKey({ client: bearerClient(a.url, adminToken()), path: { id } });
      expect(res.response!.status).toBe(200);
      expect(await disconnected).toBe('io server disconnect');
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(RelayAgentError);
      expect(errors[0]).toMatchObject({ code: 'API_KEY_REVOKED', retryable: false });

      // Several backoff periods later: no reconnect attempt reached B (it would be refused API_KEY_INVALID).
      const handshakes = async () => (await b.hub.metrics.handshakes.get()).values.reduce((n, v) => n + v.value, 0);
      const before = await handshakes();
      await sleep(10 * backoff.capMs);
      expect(await handshakes()).toBe(before);
      expect(revoked.connected).toBe(false);
      expect(survivor.connected).toBe(true);
      expect(errors).toHaveLength(1);
      expect((await refusal(agentSocket(b.url, { apiKey: key, agentId: 'bot-a' }))).code).toBe('API_KEY_INVALID');
    } finally {
      revoked.close();
      survivor.close();
    }
  });
});
