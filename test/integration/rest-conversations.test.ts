import type { ClientInboundMessage } from '../../src/protocol';
import { startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { adminToken, anonymousClient, api, apiKeyClient, bearerClient, createKey } from './rest-client.helper';

let h: TestHub;
beforeEach(async () => {
  h = await startHub();
});
afterEach(() => h.close());

const path = (agentId: string, clientId: string) => ({ path: { agentId, clientId } });

describe('REST conversations', () => {
  it('lists a conversation newest page first, each page oldest first, with its broadcasts and the user messages', async () => {
    const agent = await h.agent('bot');
    agent.onMessage(() => {});
    const socket = await h.client('bot', { sub: 'u1' });
    const mine = (await socket.timeout(5000).emitWithAck('message', { clientMessageId: 'c1', text: 'question' })) as {
      id: string;
      ts: string;
    };
    for (let i = 0; i < 3; i++) await agent.reply('u1', `a${i}`);
    await agent.reply('*', 'to all');
    await agent.reply('u2', 'not u1');

    const admin = bearerClient(h.url, adminToken());
    const first = await api.getConversationMessages({ client: admin, ...path('bot', 'u1'), query: { perPage: 2 } });
    expect(first.response!.status).toBe(200);
    expect(first.data!.meta).toEqual({ total: 5, lastPage: 3, currentPage: 1, perPage: 2 });
    expect(first.data!.data.map((m) => m.text)).toEqual(['a2', 'to all']);
    const last = await api.getConversationMessages({ client: admin, ...path('bot', 'u1'), query: { perPage: 2, page: 3 } });
    expect(last.data!.data).toEqual([
      { id: mine.id, ts: mine.ts, agentId: 'bot', author: 'user', text: 'question', clientMessageId: 'c1' } satisfies ClientInboundMessage,
    ]);
    const beyond = await api.getConversationMessages({ client: admin, ...path('bot', 'u1'), query: { page: 9 } });
    expect(beyond.data!.data).toEqual([]);
    const none = await api.getConversationMessages({ client: admin, ...path('bot', 'nobody') });
    expect(none.data!.data.map((m) => m.text)).toEqual(['to all']);
  });

  it('deletes a conversation (204, idempotent) and keeps the others', async () => {
    const agent = await h.agent('bot');
    await agent.reply('u1', 'gone soon');
    await agent.reply('u2', 'stays');
    const admin = bearerClient(h.url, adminToken());
    for (let i = 0; i < 2; i++) {
      const res = await api.deleteConversation({ client: admin, ...path('bot', 'u1') });
      expect(res.response!.status).toBe(204);
    }
    expect((await api.getConversationMessages({ client: admin, ...path('bot', 'u1') })).data!.data).toEqual([]);
    expect((await api.getConversationMessages({ client: admin, ...path('bot', 'u2') })).data!.data.map((m) => m.text)).toEqual(['stays']);
  });

  it('accepts api keys by scope: history:read reads, history:write deletes, neither does the other', async () => {
    const agent = await h.agent('bot');
    await agent.reply('u1', 'hello');
    const reader = apiKeyClient(h.url, await createKey(h.url, ['history:read']));
    const writer = apiKeyClient(h.url, await createKey(h.url, ['history:write']));
    const publisher = apiKeyClient(h.url, await createKey(h.url, ['messages:publish']));

    expect((await api.getConversationMessages({ client: reader, ...path('bot', 'u1') })).data!.data.map((m) => m.text)).toEqual(['hello']);
    const readerDeletes = await api.deleteConversation({ client: reader, ...path('bot', 'u1') });
    expect([readerDeletes.response!.status, readerDeletes.error]).toEqual([403, expect.objectContaining({ code: 'SCOPE_REQUIRED' })]);
    const writerReads = await api.getConversationMessages({ client: writer, ...path('bot', 'u1') });
    expect([writerReads.response!.status, writerReads.error]).toEqual([403, expect.objectContaining({ code: 'SCOPE_REQUIRED' })]);
    const other = await api.getConversationMessages({ client: publisher, ...path('bot', 'u1') });
    expect(other.response!.status).toBe(403);
    expect((await api.deleteConversation({ client: writer, ...path('bot', 'u1') })).response!.status).toBe(204);
  });

  it('refuses other credentials: 401 without any, 403 for a non-admin token, 401 for an unknown key', async () => {
    const anonymous = await api.getConversationMessages({ client: anonymousClient(h.url), ...path('bot', 'u1') });
    expect(anonymous.response!.status).toBe(401);
    const user = await api.getConversationMessages({ client: bearerClient(h.url, mintToken({ sub: 'u1' })), ...path('bot', 'u1') });
    expect([user.response!.status, user.error]).toEqual([403, expect.objectContaining({ code: 'ROLE_REQUIRED' })]);
    const unknown = await api.deleteConversation({ client: apiKeyClient(h.url, 'rk_not_a_key'), ...path('bot', 'u1') });
    expect([unknown.response!.status, unknown.error]).toEqual([401, expect.objectContaining({ code: 'API_KEY_INVALID' })]);
    const badAgent = await api.getConversationMessages({ client: bearerClient(h.url, adminToken()), ...path('bad agent', 'u1') });
    expect(badAgent.response!.status).toBe(400);
  });

  it('deleteUser erases every conversation of that sub with every bot, and no one else', async () => {
    const a = await h.agent('bot-a');
    const b = await h.agent('bot-b');
    await a.reply('gone', 'a1');
    await b.reply('gone', 'b1');
    await a.reply('kept', 'a2');
    const admin = bearerClient(h.url, adminToken());
    await api.createUser({ client: admin, body: { id: 'gone', email: 'gone@example.com', name: 'Gone' } });
    expect((await api.deleteUser({ client: admin, path: { id: 'gone' } })).response!.status).toBe(200);
    for (const bot of ['bot-a', 'bot-b']) {
      expect((await api.getConversationMessages({ client: admin, ...path(bot, 'gone') })).data!.data).toEqual([]);
    }
    expect((await api.getConversationMessages({ client: admin, ...path('bot-a', 'kept') })).data!.data.map((m) => m.text)).toEqual(['a2']);
  });
});

describe('REST conversations: two security alternatives', () => {
  it('does not count the scheme a request did not use as a failed authentication', async () => {
    const strict = await startHub({ HANDSHAKE_FAILURES_PER_MIN: '3' });
    try {
      const reader = apiKeyClient(strict.url, await createKey(strict.url, ['history:read']));
      const admin = bearerClient(strict.url, adminToken());
      for (let i = 0; i < 8; i++) {
        expect((await api.getConversationMessages({ client: reader, ...path('bot', 'u1') })).response!.status).toBe(200);
        expect((await api.getConversationMessages({ client: admin, ...path('bot', 'u1') })).response!.status).toBe(200);
      }
      // A request failing both alternatives counts once: the fourth goes past a budget of three.
      const anonymous = anonymousClient(strict.url);
      const statuses = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await api.getConversationMessages({ client: anonymous, ...path('bot', 'u1') })).response!.status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await strict.close();
    }
  });
});
