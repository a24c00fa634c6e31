import type { ClientInboundMessage } from '../../../src/protocol';
import { RelayChat, type RelayChatError, type StateChange, type StorageLike } from '../src';
import type { RelayChatOptions } from '../src/options';
import { STORAGE_PREFIX } from '../src/resume-point';
import { chatConnected, FakeClientHub, fakeJwt, nextChatEvent } from '../../../test/helpers/fake-client-hub';

/** `sessionStorage` as a page has it: string values, and a switch to make it fail like a full or blocked one. */
class StorageShim implements StorageLike {
  readonly items = new Map<string, string>();
  failing: Error | undefined;
  writes = 0;

  getItem(key: string): string | null {
    if (this.failing) throw this.failing;
    return this.items.get(key) ?? null;
  }

  setItem(key: string, value: string): void {
    this.writes++;
    if (this.failing) throw this.failing;
    this.items.set(key, String(value));
  }
}

const quotaExceeded = () => Object.assign(new Error('The quota has been exceeded.'), { name: 'QuotaExceededError' });

describe('embed RelayChat: resuming a conversation (lastMessageId, recovered, gap, persist)', () => {
  let hub: FakeClientHub;
  let storage: StorageShim;
  const chats: RelayChat[] = [];
  const open = (options: Partial<RelayChatOptions> = {}) => {
    const chat = new RelayChat({ url: hub.url, agentId: 'bot', token: fakeJwt('u1'), backoff: { baseMs: 5, capMs: 20 }, ...options });
    chats.push(chat);
    return chat;
  };
  /** Every `message` and `state` event of a chat, in order, as short strings. */
  const record = (chat: RelayChat) => {
    const events: string[] = [];
    chat.on('message', (m) => events.push(`message ${m.id}`));
    chat.on('state', (s) => events.push(`state ${s.state}${s.recovered === undefined ? '' : ` recovered=${s.recovered}`}`));
    chat.on('gap', (g) => events.push(`gap ${g.lastMessageId}`));
    return events;
  };
  const received = (chat: RelayChat, id: string) => nextChatEvent(chat, 'message', (m) => m.id === id);
  /** Closes the transport under the chat and waits for its reconnect. */
  const bounce = async (chat: RelayChat) => {
    const again = chatConnected(chat);
    hub.last.conn.close();
    return again;
  };

  beforeEach(async () => {
    hub = await FakeClientHub.start();
    storage = new StorageShim();
    (globalThis as { sessionStorage?: StorageLike }).sessionStorage = storage;
  });
  afterEach(async () => {
    for (const chat of chats.splice(0)) chat.close();
    delete (globalThis as { sessionStorage?: StorageLike }).sessionStorage;
    await hub.stop();
  });

  it('sends the last delivered id on every reconnect and gets what it missed, in order, once, before connected', async () => {
    const chat = open();
    const events = record(chat);
    await chatConnected(chat);
    expect(hub.auths[0]).toEqual({ token: fakeJwt('u1'), agentId: 'bot' });
    const m1 = hub.publish('one');
    const m2 = hub.publish('two');
    await received(chat, m2.id);

    // Replies logged while the chat is away: the reconnect replays them.
    hub.last.disconnect(true);
    await nextChatEvent(chat, 'state', (s) => s.state === 'connecting');
    const [m3, m4] = [hub.message('three'), hub.message('four')];
    hub.log.push(m3, m4);
    await chatConnected(chat);
    expect(hub.auths[1]).toEqual({ token: fakeJwt('u1'), agentId: 'bot', lastMessageId: m2.id });

    const m5 = hub.publish('five');
    await received(chat, m5.id);
    await bounce(chat);
    expect(hub.auths[2].lastMessageId).toBe(m5.id);
    expect(events).toEqual([
      'state connecting',
      'state connected',
      `message ${m1.id}`,
      `message ${m2.id}`,
      'state connecting',
      `message ${m3.id}`,
      `message ${m4.id}`,
      'state connected recovered=true',
      `message ${m5.id}`,
      'state connecting',
      'state connected recovered=true',
    ]);
  });

  it('drops replayed messages it already has, so an overlapping replay never doubles a message', async () => {
    const chat = open();
    const got: string[] = [];
    chat.on('message', (m) => got.push(m.text));
    await chatConnected(chat);
    const m1 = hub.publish('one');
    const m2 = hub.publish('two');
    await received(chat, m2.id);
    // An at-least-once replay that starts too early.
    const m3 = hub.message('three');
    hub.log.push(m3);
    hub.recover = () => [m1, m2, m3];
    await bounce(chat);
    expect(got).toEqual(['one', 'two', 'three']);
  });

  it('reports recovered: false and a gap when the hub cannot replay, then resumes from the newest history page', async () => {
    const chat = open();
    await chatConnected(chat);
    const old = hub.publish('old');
    await received(chat, old.id);
    // The log was trimmed past the chat's last id while it was away.
    hub.log.splice(0);
    const kept = [hub.message('kept 1'), hub.message('kept 2')];
    hub.log.push(...kept);

    const events = record(chat);
    const gap = nextChatEvent(chat, 'gap');
    await bounce(chat);
    await expect(gap).resolves.toEqual({ lastMessageId: old.id });
    expect(events).toEqual(['state connecting', 'state connected recovered=false', `gap ${old.id}`]);

    const page = await chat.history();
    expect(page).toEqual({ messages: kept, hasMore: false });
    // The page told the chat where the conversation stands: the next reconnect recovers.
    await bounce(chat);
    expect(hub.auths.at(-1)?.lastMessageId).toBe(kept[1].id);
    expect(events.at(-1)).toBe('state connected recovered=true');
  });

  it('keeps a resume point newer than a history page that raced with a live message', async () => {
    const chat = open();
    await chatConnected(chat);
    const before = hub.publish('before');
    await received(chat, before.id);
    await bounce(chat);
    hub.history = () => undefined;
    const page = chat.history();
    await hub.until(() => hub.pendingHistory.length === 1);
    const live = hub.publish('live');
    await received(chat, live.id);
    // Answered late, with the page the hub read before `live` was logged.
    hub.pendingHistory[0]({ ok: true, messages: [before], hasMore: false });
    await expect(page).resolves.toEqual({ messages: [before], hasMore: false });
    await bounce(chat);
    expect(hub.auths.at(-1)?.lastMessageId).toBe(live.id);
  });

  it('persists the last id across a reload, per (hub, agentId, sub), and never hands it to another user or bot', async () => {
    const first = open();
    await chatConnected(first);
    const m1 = hub.publish('for u1');
    await received(first, m1.id);
    first.close();

    // A reload: a new RelayChat in the same tab, same hub, bot and user.
    const reloaded = open();
    await chatConnected(reloaded);
    expect(hub.auths.at(-1)).toEqual({ token: fakeJwt('u1'), agentId: 'bot', lastMessageId: m1.id });

    const otherUser = open({ token: fakeJwt('u2') });
    await chatConnected(otherUser);
    expect(hub.auths.at(-1)).toEqual({ token: fakeJwt('u2'), agentId: 'bot' });
    const otherBot = open({ agentId: 'bot-2' });
    await chatConnected(otherBot);
    expect(hub.auths.at(-1)).toEqual({ token: fakeJwt('u1'), agentId: 'bot-2' });
    expect([...storage.items.keys()]).toEqual([STORAGE_PREFIX + JSON.stringify([`${hub.url}/ws/client`, '/socket.io/', 'bot', 'u1'])]);
    // A sub with the key's separators in it cannot reach another user's entry.
    const tricky = open({ token: fakeJwt('u1","x') });
    await chatConnected(tricky);
    expect(hub.auths.at(-1)?.lastMessageId).toBeUndefined();
  });

  it('starts the new user from its own id when the token getter switches users', async () => {
    let sub = 'u1';
    const chat = open({ token: async () => fakeJwt(sub) });
    await chatConnected(chat);
    const m1 = hub.publish('for u1');
    await received(chat, m1.id);
    sub = 'u2';
    await bounce(chat);
    expect(hub.auths.at(-1)).toEqual({ token: fakeJwt('u2'), agentId: 'bot' });
    const m2 = hub.publish('for u2');
    await received(chat, m2.id);
    sub = 'u1';
    await bounce(chat);
    expect(hub.auths.at(-1)?.lastMessageId).toBe(m1.id);
  });

  it('keeps the id in memory only with persist: false, and with a token whose sub it cannot read', async () => {
    const chat = open({ persist: false });
    await chatConnected(chat);
    const m1 = hub.publish('one');
    await received(chat, m1.id);
    await bounce(chat);
    expect(hub.auths.at(-1)?.lastMessageId).toBe(m1.id);

    const opaque = open({ token: 'not-a-jwt' });
    await chatConnected(opaque);
    const m2 = hub.publish('two');
    await received(opaque, m2.id);
    await bounce(opaque);
    expect(hub.auths.at(-1)).toEqual({ token: 'not-a-jwt', agentId: 'bot', lastMessageId: m2.id });
    expect(storage.writes).toBe(0);
  });

  it('uses a storage passed as persist, and ignores a stored value it did not write', async () => {
    const own = new StorageShim();
    const key = STORAGE_PREFIX + JSON.stringify([`${hub.url}/ws/client`, '/socket.io/', 'bot', 'u1']);
    own.items.set(key, 'x'.repeat(65));
    const chat = open({ persist: own });
    await chatConnected(chat);
    expect(hub.auths.at(-1)?.lastMessageId).toBeUndefined();
    const m1 = hub.publish('one');
    await received(chat, m1.id);
    expect(own.items.get(key)).toBe(m1.id);
    expect(storage.writes).toBe(0);
    expect(() => open({ persist: {} as StorageLike })).toThrow(/persist/);
  });

  it('reports a failing storage once as STORAGE_FAILED and goes on resuming from memory', async () => {
    storage.failing = quotaExceeded();
    const chat = open();
    const errors: RelayChatError[] = [];
    chat.on('error', (e) => errors.push(e));
    const got: ClientInboundMessage[] = [];
    chat.on('message', (m) => got.push(m));
    await chatConnected(chat);
    const m1 = hub.publish('one');
    const m2 = hub.publish('two');
    await received(chat, m2.id);
    await chat.send('still sending');
    await bounce(chat);
    // Resumes from the last message received (its own acked send is no resume point: docs/soak.md).
    expect(hub.auths.at(-1)?.lastMessageId).toBe(m2.id);
    expect(got.map((m) => m.id)).toEqual([m1.id, m2.id]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'STORAGE_FAILED', retryable: false });
    expect(errors[0].message).toMatch(/QuotaExceededError/);
    expect(chat.state).toBe('connected');
  });

  it('connects without persistence when reading sessionStorage itself throws (storage blocked)', async () => {
    Object.defineProperty(globalThis, 'sessionStorage', {
      configurable: true,
      get() {
        throw Object.assign(new Error('Access is denied for this document.'), { name: 'SecurityError' });
      },
    });
    const chat = open();
    const error = nextChatEvent(chat, 'error');
    await chatConnected(chat);
    await expect(error).resolves.toMatchObject({ code: 'STORAGE_FAILED', message: expect.stringMatching(/SecurityError/) });
    const m1 = hub.publish('one');
    await received(chat, m1.id);
    await bounce(chat);
    expect(hub.auths.at(-1)?.lastMessageId).toBe(m1.id);
  });

  it('shows the user messages of other tabs as author user, and never echoes its own sends back', async () => {
    const chat = open();
    const got: ClientInboundMessage[] = [];
    chat.on('message', (m) => got.push(m));
    await chatConnected(chat);
    // Another tab of the same user wrote this one.
    const fromOtherTab = hub.publish('typed in tab 2', { author: 'user', clientMessageId: 'tab-2-cmid' });

    // The hub echoes one of this tab's own messages (resent after a reconnect) before its ack arrives.
    hub.ack = (msg, socket) => {
      const own = { ...hub.message(msg.text, { author: 'user', clientMessageId: msg.clientMessageId }), id: `own-${msg.text}` };
      hub.log.push(own);
      if (msg.text === 'echoed') socket.emit('message', own);
      return { ok: true, id: own.id, ts: 'now' };
    };
    await chat.send('echoed');
    await chat.send('acked');
    // A replay that includes both own messages again.
    const reply = hub.publish('reply');
    await received(chat, reply.id);
    hub.recover = () => hub.log;
    await bounce(chat);
    expect(got.map((m) => [m.author, m.text])).toEqual([
      ['user', 'typed in tab 2'],
      ['agent', 'reply'],
    ]);
    expect(got[0]).toEqual(fromOtherTab);
  });

  it('gives connected no recovered flag when the hub sends none (a hub without a log)', async () => {
    const chat = open();
    await chatConnected(chat);
    const m1 = hub.publish('one');
    await received(chat, m1.id);
    hub.recover = () => undefined;
    const states: StateChange[] = [];
    chat.on('state', (s) => states.push(s));
    const gap = jest.fn();
    chat.on('gap', gap);
    await bounce(chat);
    expect(hub.auths.at(-1)?.lastMessageId).toBe(m1.id);
    expect(states).toEqual([{ state: 'connecting' }, { state: 'connected' }]);
    expect(gap).not.toHaveBeenCalled();
  });
});
