import { Events, type HandshakeErrorData } from '../../../src/protocol';
import { RelayChat, type StateChange } from '../src';
import type { RelayChatOptions } from '../src/options';
import { chatConnected, FakeClientHub as FakeHub, nextChatEvent, chatStopped } from '../../../test/helpers/fake-client-hub';

const refusal = (code: HandshakeErrorData['code'], retryable: boolean) => () => ({ code, retryable });

describe('embed RelayChat against a Socket.IO server', () => {
  let hub: FakeHub;
  const chats: RelayChat[] = [];
  const open = (options: Partial<RelayChatOptions> = {}) => {
    const chat = new RelayChat({ url: hub.url, agentId: 'bot', token: 'jwt', backoff: { baseMs: 5, capMs: 20 }, ...options });
    chats.push(chat);
    return chat;
  };

  beforeEach(async () => {
    hub = await FakeHub.start();
  });
  afterEach(async () => {
    for (const chat of chats.splice(0)) chat.close();
    await hub.stop();
  });

  it('connects, reports the session and delivers a send with a fresh clientMessageId', async () => {
    const chat = open();
    const states: StateChange[] = [];
    chat.on('state', (s) => states.push(s));
    const status = nextChatEvent(chat, 'agent:status');
    await chatConnected(chat);
    expect(states).toEqual([{ state: 'connecting' }, { state: 'connected' }]);
    expect(chat.state).toBe('connected');
    await expect(status).resolves.toEqual({ agentId: 'bot', online: true });
    const ack = await chat.send('hello', { data: { lang: 'en' } });
    expect(hub.received).toEqual([{ clientMessageId: expect.stringMatching(/^[0-9a-f-]{36}$/), text: 'hello', data: { lang: 'en' } }]);
    expect(ack).toEqual({ id: `h-${hub.received[0].clientMessageId}`, ts: 'now' });
    expect(hub.last.handshake.auth).toEqual({ token: 'jwt', agentId: 'bot' });
  });

  it('queues sends made before the connection and flushes them in order', async () => {
    const chat = open();
    const sends = ['one', 'two', 'three'].map((text) => chat.send(text));
    await Promise.all(sends);
    expect(hub.received.map((m) => m.text)).toEqual(['one', 'two', 'three']);
  });

  it('resends a message lost with its connection under the same clientMessageId, and resolves it once', async () => {
    let dropped = false;
    hub.ack = (msg, socket) => {
      if (dropped) return { ok: true, id: 'h1', ts: 'now' };
      dropped = true;
      socket.conn.close();
      return undefined;
    };
    const chat = open();
    const sent = chat.send('survives');
    await expect(sent).resolves.toEqual({ id: 'h1', ts: 'now' });
    expect(hub.received).toHaveLength(2);
    expect(hub.received[1].clientMessageId).toBe(hub.received[0].clientMessageId);
    expect(hub.sockets).toHaveLength(2);
  });

  it('rejects a send on an error ack, drops it from the outbox and goes on with the next', async () => {
    hub.ack = (msg) =>
      msg.text === 'bad' ? { ok: false, error: { code: 'AGENT_OFFLINE', message: 'no runtime' } } : { ok: true, id: 'ok', ts: 'now' };
    const chat = open();
    const bad = chat.send('bad');
    const good = chat.send('good');
    await expect(bad).rejects.toMatchObject({ name: 'RelayChatError', code: 'AGENT_OFFLINE', message: 'no runtime' });
    await expect(good).resolves.toEqual({ id: 'ok', ts: 'now' });
    expect(hub.received.map((m) => m.text)).toEqual(['bad', 'good']);
  });

  it('rejects with OUTBOX_FULL beyond outboxLimit, and refuses invalid or oversized payloads locally', async () => {
    const chat = open({ outboxLimit: 2, maxMessageBytes: 200 });
    const queued = [chat.send('a'), chat.send('b')];
    await expect(chat.send('c')).rejects.toMatchObject({ code: 'OUTBOX_FULL' });
    await expect(chat.send('x'.repeat(300))).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await expect(chat.send('x', { data: [] as unknown as Record<string, unknown> })).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    await Promise.all(queued);
  });

  it('calls the getter on every attempt and gives TOKEN_INVALID one retry before stopping for good', async () => {
    hub.refuse = refusal('TOKEN_INVALID', false);
    const getter = jest.fn(async () => 'rotating');
    const chat = open({ token: getter });
    const pending = chat.send('never');
    await expect(chatStopped(chat)).resolves.toEqual({ state: 'disconnected', code: 'TOKEN_INVALID' });
    expect(getter).toHaveBeenCalledTimes(2);
    await expect(pending).rejects.toMatchObject({ code: 'TOKEN_INVALID' });
    await expect(chat.send('after')).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('recovers when the retried token verifies (secret rotation)', async () => {
    hub.refuse = (token) => (token === 'old' ? { code: 'TOKEN_INVALID', retryable: false } : undefined);
    const getter = jest.fn().mockResolvedValueOnce('old').mockResolvedValue('new');
    const chat = open({ token: getter });
    const error = nextChatEvent(chat, 'error');
    await chatConnected(chat);
    await expect(error).resolves.toMatchObject({ code: 'TOKEN_INVALID', retryable: true });
    expect(hub.tokens).toEqual(['old', 'new']);
  });

  it('stops on TOKEN_INVALID at once with a fixed token', async () => {
    hub.refuse = refusal('TOKEN_INVALID', false);
    const chat = open();
    await expect(chatStopped(chat)).resolves.toEqual({ state: 'disconnected', code: 'TOKEN_INVALID' });
    expect(hub.tokens).toHaveLength(1);
  });

  it('treats a handshake TOKEN_EXPIRED as terminal with a fixed token and as retryable with a getter', async () => {
    hub.refuse = (token) => (token === 'stale' ? { code: 'TOKEN_EXPIRED', retryable: true } : undefined);
    const fixed = open({ token: 'stale' });
    await expect(chatStopped(fixed)).resolves.toEqual({ state: 'disconnected', code: 'TOKEN_EXPIRED' });

    const getter = jest.fn().mockResolvedValueOnce('stale').mockResolvedValue('fresh');
    const refreshing = open({ token: getter });
    await chatConnected(refreshing);
    expect(getter).toHaveBeenCalledTimes(2);
  });

  it('stops on a non-retryable handshake code and retries a retryable one', async () => {
    hub.refuse = refusal('USER_DEACTIVATED', false);
    const deactivated = open();
    await expect(chatStopped(deactivated)).resolves.toEqual({ state: 'disconnected', code: 'USER_DEACTIVATED' });

    let refusals = 2;
    hub.refuse = () => (refusals-- > 0 ? { code: 'RATE_LIMITED', retryable: true } : undefined);
    const limited = open();
    const errors: string[] = [];
    limited.on('error', (e) => errors.push(e.code));
    await chatConnected(limited);
    expect(errors).toEqual(['RATE_LIMITED', 'RATE_LIMITED']);
  });

  it('keeps retrying while the hub is down and connects once it is back', async () => {
    const port = Number(new URL(hub.url).port);
    await hub.stop();
    const chat = open({ url: `http://127.0.0.1:${port}` });
    await expect(nextChatEvent(chat, 'error')).resolves.toMatchObject({ code: 'CONNECT_FAILED' });
    expect(chat.state).toBe('connecting');
    hub = await FakeHub.start(port);
    await chatConnected(chat);
  });

  it('surfaces a failing getter as an error and retries with backoff', async () => {
    const getter = jest.fn().mockRejectedValueOnce(new Error('backend down')).mockResolvedValue('jwt');
    const chat = open({ token: getter });
    await expect(nextChatEvent(chat, 'error')).resolves.toMatchObject({ code: 'TOKEN_FETCH_FAILED' });
    await chatConnected(chat);
  });

  it('reconnects after session:closed TOKEN_EXPIRED with a getter, and stops with a fixed token', async () => {
    let issued = 0;
    const getter = jest.fn(async () => `t${++issued}`);
    const refreshing = open({ token: getter });
    await chatConnected(refreshing);
    const reconnecting = nextChatEvent(refreshing, 'state');
    hub.last.emit(Events.sessionClosed, { code: 'TOKEN_EXPIRED', retryable: true });
    hub.last.disconnect(true);
    await expect(reconnecting).resolves.toEqual({ state: 'connecting', code: 'TOKEN_EXPIRED' });
    await chatConnected(refreshing);
    expect(hub.tokens).toEqual(['t1', 't2']);

    const fixed = open();
    await chatConnected(fixed);
    hub.last.emit(Events.sessionClosed, { code: 'TOKEN_EXPIRED', retryable: true });
    hub.last.disconnect(true);
    await expect(chatStopped(fixed)).resolves.toEqual({ state: 'disconnected', code: 'TOKEN_EXPIRED' });
  });

  it('stops after session:closed USER_DEACTIVATED', async () => {
    const chat = open();
    await chatConnected(chat);
    hub.last.emit(Events.sessionClosed, { code: 'USER_DEACTIVATED', retryable: false });
    hub.last.disconnect(true);
    await expect(chatStopped(chat)).resolves.toEqual({ state: 'disconnected', code: 'USER_DEACTIVATED' });
  });

  it('reconnects after a transport close (draining replica)', async () => {
    const chat = open();
    await chatConnected(chat);
    hub.last.conn.close();
    await expect(nextChatEvent(chat, 'state')).resolves.toEqual({ state: 'connecting' });
    await chatConnected(chat);
    expect(hub.sockets).toHaveLength(2);
  });

  it('refreshes in-band on auth:expiring with a getter and reports a refused refresh', async () => {
    let issued = 0;
    const getter = jest.fn(async () => `t${++issued}`);
    const chat = open({ token: getter });
    await chatConnected(chat);
    const refreshes: string[] = [];
    let firstRefresh!: () => void;
    const refreshed = new Promise<void>((resolve) => (firstRefresh = resolve));
    hub.last.on(Events.authRefresh, ({ token }: { token: string }, ack: (res: unknown) => void) => {
      refreshes.push(token);
      ack(refreshes.length === 1 ? { ok: true, tokenExpiresAt: null } : { ok: false, error: { code: 'SUB_MISMATCH' } });
      firstRefresh();
    });
    hub.last.emit(Events.authExpiring, { expiresAt: new Date().toISOString() });
    await refreshed;
    const error = nextChatEvent(chat, 'error');
    hub.last.emit(Events.authExpiring, { expiresAt: new Date().toISOString() });
    await expect(error).resolves.toMatchObject({ code: 'SUB_MISMATCH' });
    expect(refreshes).toEqual(['t2', 't3']);
    expect(chat.state).toBe('connected');
  });

  it('does not refresh a fixed token', async () => {
    const chat = open();
    await chatConnected(chat);
    const refresh = jest.fn();
    hub.last.on(Events.authRefresh, refresh);
    hub.last.emit(Events.authExpiring, { expiresAt: new Date().toISOString() });
    // A round trip after the expiring notice proves the SDK had its chance to answer.
    await chat.send('ping');
    expect(refresh).not.toHaveBeenCalled();
  });

  it('drops inbound duplicates by id and never surfaces debug traces', async () => {
    const chat = open();
    await chatConnected(chat);
    const got: string[] = [];
    chat.on('message', (m) => got.push(m.id));
    const surfaced = jest.fn();
    (chat as unknown as { on(e: string, f: () => void): void }).on('debug', surfaced);
    const msg = (id: string) => ({ id, ts: 'now', agentId: 'bot', author: 'agent', text: id });
    hub.last.emit(Events.message, msg('m1'));
    hub.last.emit(Events.debug, { agentId: 'bot', trace: 'secret', ts: 'now' });
    hub.last.emit(Events.message, msg('m1'));
    hub.last.emit(Events.message, msg('m2'));
    await nextChatEvent(chat, 'message', (m) => m.id === 'm2');
    expect(got).toEqual(['m1', 'm2']);
    expect(surfaced).not.toHaveBeenCalled();
  });

  it('close() ends the chat without a code and rejects pending sends with CLOSED', async () => {
    hub.ack = () => undefined;
    const chat = open();
    await chatConnected(chat);
    const pending = chat.send('unacked');
    await hub.until(() => hub.received.length === 1);
    const done = chatStopped(chat);
    chat.close();
    await expect(done).resolves.toEqual({ state: 'disconnected' });
    await expect(pending).rejects.toMatchObject({ code: 'CLOSED' });
    expect(chat.state).toBe('disconnected');
  });

  it('rejects a send that the hub never acknowledges with TIMEOUT', async () => {
    hub.ack = () => undefined;
    const chat = open({ ackTimeoutMs: 50 });
    await expect(chat.send('lost')).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(chat.state).toBe('connected');
  });

  it('cuts a long backoff delay short when the browser comes back online or the tab becomes visible', async () => {
    const page = { window: new EventTarget(), document: Object.assign(new EventTarget(), { visibilityState: 'visible' }) };
    Object.assign(globalThis, page);
    // Pins every backoff draw near its one-minute bound, so only the wake signals can explain a reconnect.
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.99);
    try {
      let refusals = 1;
      hub.refuse = () => (refusals-- > 0 ? { code: 'RATE_LIMITED', retryable: true } : undefined);
      const chat = open({ backoff: { baseMs: 60_000, capMs: 60_000 } });
      await nextChatEvent(chat, 'error');
      page.window.dispatchEvent(new Event('online'));
      await chatConnected(chat);

      hub.last.conn.close();
      await nextChatEvent(chat, 'state', (s) => s.state === 'connecting');
      page.document.dispatchEvent(new Event('visibilitychange'));
      await chatConnected(chat);
      expect(hub.sockets).toHaveLength(2);
    } finally {
      random.mockRestore();
      for (const key of Object.keys(page)) delete (globalThis as Record<string, unknown>)[key];
    }
  });

  it('is connected only after session, and reconnects when a hub accepts the socket but never sends it', async () => {
    let silent = 1;
    hub.sendsSession = () => silent-- <= 0;
    hub.ack = () => ({ ok: true, id: 'after-session', ts: 'now' });
    const chat = open({ ackTimeoutMs: 200 });
    const states: StateChange[] = [];
    chat.on('state', (s) => states.push(s));
    const sent = chat.send('waits for the session');
    await expect(nextChatEvent(chat, 'error')).resolves.toMatchObject({
      code: 'CONNECT_FAILED',
      message: 'the hub sent no session',
      retryable: true,
    });
    // The outbox was held on the silent socket: nothing went out there.
    expect(hub.received).toEqual([]);
    await chatConnected(chat);
    await expect(sent).resolves.toEqual({ id: 'after-session', ts: 'now' });
    expect(hub.sockets).toHaveLength(2);
    expect(hub.sockets[0].connected).toBe(false);
    expect(states).toEqual([{ state: 'connecting' }, { state: 'connected' }]);
  });

  it('validates url and agentId at construction', () => {
    expect(() => new RelayChat({ url: 'relay.example.com', agentId: 'bot', token: 't' })).toThrow(/url/);
    expect(() => new RelayChat({ url: hub.url, agentId: 'no spaces', token: 't' })).toThrow(/agentId/);
  });
});
