import { HISTORY_MAX_LIMIT } from '../../../src/protocol';
import { RelayChat } from '../src';
import { historyRequest } from '../src/history';
import type { RelayChatOptions } from '../src/options';
import { chatConnected, FakeClientHub, nextChatEvent } from '../../../test/helpers/fake-client-hub';

describe('embed RelayChat.history()', () => {
  let hub: FakeClientHub;
  const chats: RelayChat[] = [];
  const open = (options: Partial<RelayChatOptions> = {}) => {
    const chat = new RelayChat({
      url: hub.url,
      agentId: 'bot',
      token: 'jwt',
      persist: false,
      backoff: { baseMs: 5, capMs: 20 },
      ...options,
    });
    chats.push(chat);
    return chat;
  };

  beforeEach(async () => {
    hub = await FakeClientHub.start();
  });
  afterEach(async () => {
    for (const chat of chats.splice(0)) chat.close();
    await hub.stop();
  });

  it('pages backwards through the conversation, oldest first, until hasMore is false', async () => {
    const log = Array.from({ length: 5 }, (_, i) => hub.message(`m${i}`, { author: i % 2 ? 'user' : 'agent' }));
    hub.log.push(...log);
    const chat = open();
    await chatConnected(chat);
    const newest = await chat.history({ limit: 2 });
    expect(newest).toEqual({ messages: log.slice(3), hasMore: true });
    const middle = await chat.history({ before: newest.messages[0].id, limit: 2 });
    expect(middle).toEqual({ messages: log.slice(1, 3), hasMore: true });
    const oldest = await chat.history({ before: middle.messages[0].id, limit: 2 });
    expect(oldest).toEqual({ messages: log.slice(0, 1), hasMore: false });
    expect(await chat.history()).toEqual({ messages: log, hasMore: false });
    expect(hub.historyRequests).toEqual([{ limit: 2 }, { before: log[3].id, limit: 2 }, { before: log[1].id, limit: 2 }, {}]);
  });

  it('counts returned ids as seen: a later delivery of one is not emitted as message', async () => {
    const chat = open();
    await chatConnected(chat);
    const logged = hub.message('in the page');
    hub.log.push(logged);
    await chat.history();
    const got: string[] = [];
    chat.on('message', (m) => got.push(m.text));
    hub.last.emit('message', logged);
    const fresh = hub.publish('fresh');
    await nextChatEvent(chat, 'message', (m) => m.id === fresh.id);
    expect(got).toEqual(['fresh']);
  });

  it('rejects with the ack code of a refusal, retryable as the catalogue says', async () => {
    const chat = open();
    await chatConnected(chat);
    hub.history = () => ({ ok: false, error: { code: 'RATE_LIMITED', message: 'slow down' } });
    await expect(chat.history()).rejects.toMatchObject({
      name: 'RelayChatError',
      code: 'RATE_LIMITED',
      message: 'slow down',
      retryable: true,
    });
    hub.history = () => ({ ok: false, error: { code: 'SERVER_UNAVAILABLE', message: 'log unreachable' } });
    await expect(chat.history()).rejects.toMatchObject({ code: 'SERVER_UNAVAILABLE', retryable: true });
    hub.history = () => ({ ok: false, error: { code: 'INVALID_PAYLOAD', message: 'bad before' } });
    await expect(chat.history({ before: 'nope' })).rejects.toMatchObject({ code: 'INVALID_PAYLOAD', retryable: false });
    expect(chat.state).toBe('connected');
  });

  it('rejects invalid arguments locally, sending nothing', async () => {
    const chat = open();
    await chatConnected(chat);
    const bad: unknown[] = [
      { limit: 0 },
      { limit: HISTORY_MAX_LIMIT + 1 },
      { limit: 1.5 },
      { limit: '10' },
      { before: '' },
      { before: 'x'.repeat(65) },
      { before: 42 },
    ];
    for (const options of bad) {
      await expect(chat.history(options as never)).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    }
    expect(hub.historyRequests).toEqual([]);
    // Unknown properties are not passed on.
    await chat.history({ limit: 1, extra: true } as never);
    expect(hub.historyRequests).toEqual([{ limit: 1 }]);
  });

  it('rejects with NOT_CONNECTED while connecting, instead of waiting', async () => {
    hub.refuse = () => ({ code: 'RATE_LIMITED', retryable: true });
    const chat = open();
    await nextChatEvent(chat, 'error');
    expect(chat.state).toBe('connecting');
    await expect(chat.history()).rejects.toMatchObject({ code: 'NOT_CONNECTED', retryable: true });
    hub.refuse = () => undefined;
    await chatConnected(chat);
    await expect(chat.history()).resolves.toEqual({ messages: [], hasMore: false });
  });

  it('rejects with NOT_CONNECTED when the connection drops before the answer, and TIMEOUT when none comes', async () => {
    const chat = open({ ackTimeoutMs: 300 });
    await chatConnected(chat);
    hub.history = () => undefined;
    const dropped = chat.history();
    await hub.until(() => hub.pendingHistory.length === 1);
    hub.last.conn.close();
    await expect(dropped).rejects.toMatchObject({ code: 'NOT_CONNECTED', retryable: true });

    await chatConnected(chat);
    const started = Date.now();
    await expect(chat.history()).rejects.toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(chat.state).toBe('connected');
  });

  it('rejects with CLOSED after close(), and a pending request too', async () => {
    const chat = open();
    await chatConnected(chat);
    hub.history = () => undefined;
    const pending = chat.history();
    await hub.until(() => hub.pendingHistory.length === 1);
    chat.close();
    await expect(pending).rejects.toMatchObject({ code: 'CLOSED' });
    await expect(chat.history()).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('tolerates an answer without a messages array', async () => {
    const chat = open();
    await chatConnected(chat);
    hub.history = () => ({ ok: true, hasMore: false }) as never;
    await expect(chat.history()).resolves.toEqual({ messages: [], hasMore: false });
  });
});

describe('historyRequest', () => {
  it('builds the payload from the options it knows', () => {
    expect(historyRequest(undefined)).toEqual({});
    expect(historyRequest({ before: 'id-1', limit: HISTORY_MAX_LIMIT })).toEqual({ before: 'id-1', limit: HISTORY_MAX_LIMIT });
    expect(historyRequest({ limit: 1 })).toEqual({ limit: 1 });
  });
});
