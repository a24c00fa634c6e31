import type { MessageEnd } from '../../../src/protocol';
import { RelayChat, type RelayChatError } from '../src';
import type { RelayChatOptions } from '../src/options';
import { chatConnected, FakeClientHub, fakeJwt, nextChatEvent } from '../../../test/helpers/fake-client-hub';

describe('embed RelayChat: streamed answers, activity, stop and feedback', () => {
  let hub: FakeClientHub;
  const chats: RelayChat[] = [];
  const open = (options: Partial<RelayChatOptions> = {}) => {
    const chat = new RelayChat({
      url: hub.url,
      agentId: 'bot',
      token: fakeJwt('u1'),
      backoff: { baseMs: 5, capMs: 20 },
      persist: false,
      ...options,
    });
    chats.push(chat);
    return chat;
  };
  /** The chat's message events in order, as short strings. */
  const record = (chat: RelayChat) => {
    const events: string[] = [];
    chat.on('message', (m) => events.push(`message ${m.id} ${JSON.stringify(m.text)}${'streaming' in m ? ' streaming' : ''}`));
    chat.on('message:update', (u) => events.push(`update ${u.id} ${JSON.stringify(u.text)} ${u.seq}`));
    chat.on('message:end', (m) => events.push(`end ${m.id} ${JSON.stringify(m.text)} ${m.status}`));
    return events;
  };
  const ended = (chat: RelayChat, id: string) => nextChatEvent(chat, 'message:end', (m) => m.id === id);
  const updated = (chat: RelayChat, id: string, seq: number) => nextChatEvent(chat, 'message:update', (u) => u.id === id && u.seq === seq);
  /** A round trip through the hub: every event it sent before has arrived. */
  const settled = (chat: RelayChat) => chat.history({ limit: 1 });

  beforeEach(async () => {
    hub = await FakeClientHub.start();
  });
  afterEach(async () => {
    for (const chat of chats.splice(0)) chat.close();
    await hub.stop();
  });

  it('shows a stream as a message that grows, then its final text', async () => {
    const chat = open();
    const events = record(chat);
    await chatConnected(chat);
    const s = hub.startStream('', { replyTo: 'm0' });
    const started = await nextChatEvent(chat, 'message');
    expect(started).toEqual({ ...s, streaming: true });
    hub.delta(s.id, 'Hel');
    hub.delta(s.id, 'lo');
    await updated(chat, s.id, 2);
    // The bot corrects itself at the end: the final text replaces the one built from deltas.
    hub.endStream(s.id, 'complete', 'Hello!');
    const end = await ended(chat, s.id);
    expect(end).toMatchObject({ id: s.id, text: 'Hello!', status: 'complete', author: 'agent' });
    expect(events).toEqual([
      `message ${s.id} "" streaming`,
      `update ${s.id} "Hel" 1`,
      `update ${s.id} "Hello" 2`,
      `end ${s.id} "Hello!" complete`,
    ]);
  });

  it('appends only the next seq: a repeated or older delta changes nothing, and after a gap it waits for the end', async () => {
    const chat = open();
    const events = record(chat);
    await chatConnected(chat);
    const s = hub.startStream();
    hub.delta(s.id, 'a');
    hub.delta(s.id, 'b');
    hub.emitAll('message:delta', { id: s.id, seq: 2, text: 'b' }); // repeated
    hub.emitAll('message:delta', { id: s.id, seq: 1, text: 'a' }); // older
    hub.delta(s.id, 'd', 4); // seq 3 lost: a gap
    hub.delta(s.id, 'e', 5);
    hub.emitAll('message:delta', { id: 'unknown', seq: 1, text: 'x' });
    hub.endStream(s.id, 'complete', 'abcde');
    await ended(chat, s.id);
    expect(events).toEqual([
      `message ${s.id} "" streaming`,
      `update ${s.id} "a" 1`,
      `update ${s.id} "ab" 2`,
      `end ${s.id} "abcde" complete`,
    ]);
  });

  it('resumes after a reconnect with the snapshot, as an update of the message it shows, then live deltas', async () => {
    const chat = open();
    const events = record(chat);
    await chatConnected(chat);
    const s = hub.startStream();
    hub.delta(s.id, 'one ');
    await updated(chat, s.id, 1);
    const dropped = nextChatEvent(chat, 'state', (st) => st.state === 'connecting');
    hub.last.disconnect(true);
    await dropped;
    hub.delta(s.id, 'two '); // while away
    const snapshot = updated(chat, s.id, 2);
    await chatConnected(chat);
    await snapshot;
    hub.delta(s.id, 'three');
    hub.endStream(s.id);
    await ended(chat, s.id);
    expect(events).toEqual([
      `message ${s.id} "" streaming`,
      `update ${s.id} "one " 1`,
      `update ${s.id} "one two " 2`,
      `update ${s.id} "one two three" 3`,
      `end ${s.id} "one two three" complete`,
    ]);
  });

  it('gets a stream that ended while offline from the replay as message:end, and resumes from it', async () => {
    const chat = open();
    const events = record(chat);
    await chatConnected(chat);
    const m1 = hub.publish('before');
    await nextChatEvent(chat, 'message', (m) => m.id === m1.id);
    const s = hub.startStream();
    hub.delta(s.id, 'partial');
    await updated(chat, s.id, 1);
    const dropped = nextChatEvent(chat, 'state', (st) => st.state === 'connecting');
    hub.last.disconnect(true);
    await dropped;
    hub.delta(s.id, ' and the rest');
    hub.endStream(s.id, 'interrupted');
    const end = ended(chat, s.id);
    await chatConnected(chat);
    // message:start did not move the resume point: the reconnect asked for what came after m1.
    expect(hub.auths[1].lastMessageId).toBe(m1.id);
    expect(await end).toMatchObject({ text: 'partial and the rest', status: 'interrupted' });
    expect(events.filter((e) => e.includes(s.id))).toEqual([
      `message ${s.id} "" streaming`,
      `update ${s.id} "partial" 1`,
      `end ${s.id} "partial and the rest" interrupted`,
    ]);
    // message:end moved it.
    hub.last.disconnect(true);
    await chatConnected(chat);
    expect(hub.auths[2].lastMessageId).toBe(s.id);
  });

  it('shows an open stream with its text so far on a fresh start (a page reload)', async () => {
    const s = hub.startStream('', {});
    hub.delta(s.id, 'so far');
    const chat = open();
    const first = nextChatEvent(chat, 'message');
    await chatConnected(chat);
    expect(await first).toMatchObject({ id: s.id, text: 'so far', seq: 1, streaming: true });
    hub.delta(s.id, ', and more');
    expect(await updated(chat, s.id, 2)).toEqual({ ...s, text: 'so far, and more', seq: 2 });
  });

  it('shows an open stream in a history page as streaming, and still hands the page its end', async () => {
    // After a reload the page loads history once connected; the log holds the open answer at its
    // start, with text '' (the hub cannot know what the page shows). Its end must not count as seen.
    const s = hub.startStream();
    hub.delta(s.id, 'so far');
    const chat = open();
    const started = nextChatEvent(chat, 'message', (m) => m.id === s.id);
    await chatConnected(chat);
    await started;
    const { messages } = await chat.history();
    expect(messages).toEqual([{ ...s, text: 'so far', seq: 1, streaming: true }]);
    hub.delta(s.id, ' and the rest');
    const end = ended(chat, s.id);
    hub.endStream(s.id);
    expect(await end).toMatchObject({ text: 'so far and the rest', status: 'complete' });
  });

  it('ends a stream whose start a history page returned before its message:start arrived', async () => {
    const chat = open();
    await chatConnected(chat);
    const s = hub.startStream('', {}, false); // in the log, not yet on this socket
    expect((await chat.history()).messages).toEqual([expect.objectContaining({ id: s.id, text: '' })]);
    const started = nextChatEvent(chat, 'message', (m) => m.id === s.id);
    hub.emitAll('message:start', s);
    expect(await started).toMatchObject({ streaming: true });
    const end = ended(chat, s.id);
    hub.endStream(s.id, 'complete', 'done');
    expect(await end).toMatchObject({ text: 'done' });
  });

  it('hands each message:end to the page once', async () => {
    const chat = open();
    const events = record(chat);
    await chatConnected(chat);
    const s = hub.startStream();
    const end = hub.endStream(s.id);
    hub.emitAll('message:end', end);
    hub.emitAll('message:end', { ...end, text: 'a late copy' } satisfies MessageEnd);
    await settled(chat);
    expect(events).toEqual([`message ${s.id} "" streaming`, `end ${s.id} "" complete`]);
  });

  it('never starts a stream again once it has handed the page its end, whatever a later connect announces', async () => {
    const chat = open();
    const events = record(chat);
    await chatConnected(chat);
    const s = hub.startStream();
    hub.delta(s.id, 'held');
    await updated(chat, s.id, 1);
    // An end this tab was told while the stream is still open in the hub's shared state (as a hub
    // did when a delta could not be recorded), then a reconnect that announces it open.
    const told = ended(chat, s.id);
    hub.emitAll('message:end', { ...s, text: 'held', status: 'error' } satisfies MessageEnd);
    await told;
    const dropped = nextChatEvent(chat, 'state', (st) => st.state === 'connecting');
    hub.last.disconnect(true);
    await dropped;
    await chatConnected(chat);
    hub.delta(s.id, ' and more');
    hub.endStream(s.id, 'error');
    await settled(chat);
    expect(events).toEqual([`message ${s.id} "" streaming`, `update ${s.id} "held" 1`, `end ${s.id} "held" error`]);
  });

  it('passes agent:activity on as activity', async () => {
    const chat = open();
    await chatConnected(chat);
    const activity = nextChatEvent(chat, 'activity');
    hub.emitAll('agent:activity', { agentId: 'bot', state: 'tool', label: 'search', ts: 'now' });
    expect(await activity).toEqual({ agentId: 'bot', state: 'tool', label: 'search', ts: 'now' });
  });

  it('stops by id, else the newest open stream, else the answer to the last message sent', async () => {
    const chat = open();
    await chatConnected(chat);
    await expect(chat.stop()).rejects.toMatchObject({ code: 'STREAM_NOT_FOUND' });
    expect(hub.stops).toEqual([]);
    await chat.send('question');
    await chat.stop();
    const s1 = hub.startStream();
    const s2 = hub.startStream();
    await nextChatEvent(chat, 'message', (m) => m.id === s2.id);
    await chat.stop();
    await chat.stop(s1.id);
    hub.endStream(s2.id, 'cancelled');
    await ended(chat, s2.id);
    await chat.stop();
    expect(hub.stops).toEqual([{ clientMessageId: hub.received[0].clientMessageId }, { id: s2.id }, { id: s1.id }, { id: s1.id }]);
  });

  it("rejects stop with the hub's code, and without a connection with NOT_CONNECTED", async () => {
    const chat = open();
    await chatConnected(chat);
    hub.stopAck = () => ({ ok: false, error: { code: 'STREAM_NOT_FOUND', message: 'ended' } });
    const refused = await chat.stop('gone').catch((e: RelayChatError) => e);
    expect(refused).toMatchObject({ code: 'STREAM_NOT_FOUND', retryable: false });
    hub.refuse = () => ({ code: 'RATE_LIMITED', retryable: true });
    hub.last.disconnect(true);
    await nextChatEvent(chat, 'state', (st) => st.state === 'connecting');
    await expect(chat.stop('x')).rejects.toMatchObject({ code: 'NOT_CONNECTED' });
    chat.close();
    await expect(chat.feedback('x', 'up')).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('sends feedback, refuses a bad rating without a round trip, and rejects with MESSAGE_NOT_FOUND', async () => {
    const chat = open();
    await chatConnected(chat);
    await chat.feedback('m1', 'up', 'clear answer');
    await chat.feedback('m1', null);
    await expect(chat.feedback('m1', 'meh' as 'up')).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    hub.feedbackAck = () => ({ ok: false, error: { code: 'MESSAGE_NOT_FOUND', message: 'no' } });
    await expect(chat.feedback('user-msg', 'down')).rejects.toMatchObject({ code: 'MESSAGE_NOT_FOUND' });
    expect(hub.feedbacks).toEqual([
      { id: 'm1', rating: 'up', comment: 'clear answer' },
      { id: 'm1', rating: null },
      { id: 'user-msg', rating: 'down' },
    ]);
  });
});
