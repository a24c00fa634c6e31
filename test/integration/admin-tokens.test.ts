import { clientSocket, nextEvent, refusal, startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_ADMIN_JWT_SECRET } from '../helpers/tokens';
import { adminToken, api, bearerClient } from './rest-client.helper';

/**
 * Issue 10: a backend that signs chat tokens (JWT_SECRET) must not be able to mint itself an
 * ADMIN token for the REST API. Admin tokens are signed with ADMIN_JWT_SECRET.
 */
describe('admin tokens apart from chat tokens', () => {
  let t: TestHub;
  beforeAll(async () => {
    t = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '0' });
  });
  afterAll(() => t.close());

  it('refuses an ADMIN REST route to a chat-secret token that claims roles ADMIN, and serves an admin token', async () => {
    const forged = mintToken({ sub: 'root', roles: ['ADMIN'] });
    for (const call of [
      api.getUsers({ client: bearerClient(t.url, forged) }),
      api.getApiKeys({ client: bearerClient(t.url, forged) }),
      api.getAgents({ client: bearerClient(t.url, forged) }),
      api.createApiKey({ client: bearerClient(t.url, forged), body: { name: 'x', scopes: ['agent:connect'], agentIds: ['*'] } }),
    ]) {
      const res = await call;
      expect(res.error).toMatchObject({ status: 403, code: 'ROLE_REQUIRED' });
      expect((res.error as { detail: string }).detail).toContain('ADMIN_JWT_SECRET');
    }
    expect((await api.getApiKeys({ client: bearerClient(t.url, forged) })).data).toBeUndefined();
    expect((await api.getUsers({ client: bearerClient(t.url, adminToken()) })).response!.status).toBe(200);
  });

  it('keeps the chat-secret ADMIN token an admin in chat (docs/protocol.md, Connecting), and lets the admin token in too', async () => {
    const agent = await t.agent('ops-bot');
    const chatAdmin = await t.client('ops-bot', { sub: 'support-lead', roles: ['ADMIN'] });
    const operator = await t.client('ops-bot', adminToken({ sub: 'operator' }));
    const traces = [nextEvent(chatAdmin, 'debug'), nextEvent(operator, 'debug')];
    await agent.debug({ step: 'thinking' });
    for (const trace of await Promise.all(traces)) expect(trace).toMatchObject({ agentId: 'ops-bot', trace: { step: 'thinking' } });
    const me = await api.me({ client: bearerClient(t.url, mintToken({ sub: 'support-lead', roles: ['ADMIN'] })) });
    expect(me.data!.data).toMatchObject({ clientId: 'admin', roles: ['ADMIN'] });
  });

  it('refuses an admin-secret token without roles ADMIN everywhere (the admin secret signs admin tokens only)', async () => {
    const odd = mintToken({ sub: 'someone' }, TEST_ADMIN_JWT_SECRET);
    expect((await api.me({ client: bearerClient(t.url, odd) })).error).toMatchObject({ status: 401, code: 'TOKEN_INVALID' });
    expect(await refusal(clientSocket(t.url, { token: odd, agentId: 'bot' }))).toEqual({ code: 'TOKEN_INVALID', retryable: false });
  });
});
