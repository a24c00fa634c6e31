import { applyPartChange, Events, type MessagePart, type MessagePartEvent, type MessageStart } from '../../../src/protocol';
import { RelayChat, type MessageUpdate } from '../src';
import type { RelayChatOptions } from '../src/options';
import { chatConnected, FakeClientHub, fakeJwt, nextChatEvent } from '../../../test/helpers/fake-client-hub';

describe('embed RelayChat: parts, approvals and sends with parts', () => {
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

  beforeEach(async () => {
    hub = await FakeClientHub.start();
  });
  afterEach(async () => {
    for (const chat of chats.splice(0)) chat.close();
    await hub.stop();
  });

  /** Plays a hub's stream of changes: each is applied to the hub's own copy (the protocol's reference) and sent with the next seq. */
  const hubStream = (start: MessageStart) => {
    const parts: MessagePart[] = start.parts ? [...start.parts] : start.text ? [{ type: 'text', text: start.text }] : [];
    let seq = start.seq;
    return {
      parts,
      delta(index: number, text: string) {
        applyPartChange(parts, { kind: 'delta', index, text });
        hub.emitAll(Events.messageDelta, { id: start.id, seq: ++seq, text, index });
      },
      part(part: MessagePart, index = parts.length) {
        if (index === parts.length) applyPartChange(parts, { kind: 'part', part });
        else parts[index] = part;
        hub.emitAll(Events.messagePart, { id: start.id, seq: ++seq, index, part } satisfies MessagePartEvent);
      },
      get seq() {
        return seq;
      },
    };
  };

  it('keeps a streamed message whole as parts open, grow and change, and hands over the whole message each time', async () => {
    const chat = open();
    const updates: MessageUpdate[] = [];
    chat.on('message:update', (u) => updates.push(u));
    await chatConnected(chat);
    const start = hub.startStream('Hi', { replyTo: 'm0' });
    await nextChatEvent(chat, 'message');
    const s = hubStream(start);
    s.part({ type: 'reasoning', text: '' });
    s.delta(1, 'The user ');
    s.delta(1, 'greets.');
    s.delta(2, ' there'); // a new text part after the reasoning
    s.part({ type: 'tool', toolCallId: 'c1', toolName: 'lookup', state: 'input-streaming' });
    s.delta(3, '{"q":');
    s.delta(3, '1}');
    // A repeated and an older change are dropped.
    hub.emitAll(Events.messageDelta, { id: start.id, seq: s.seq, text: '1}', index: 3 });
    hub.emitAll(Events.messagePart, { id: start.id, seq: 2, index: 1, part: { type: 'reasoning', text: 'old' } });
    s.part({ type: 'tool', toolCallId: 'c1', toolName: 'lookup', state: 'approval-requested', input: { q: 1 }, approval: { id: 'a1' } }, 3);
    s.part({ type: 'suggestions', items: [{ text: 'More?' }] });
    await nextChatEvent(chat, 'message:update', (u) => u.seq === s.seq);

    expect(updates.map((u) => u.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const last = updates[updates.length - 1];
    expect(last).toEqual({ ...start, seq: 9, text: 'Hi there', parts: s.parts });
    expect(last.parts).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'reasoning', text: 'The user greets.' },
      { type: 'text', text: ' there' },
      { type: 'tool', toolCallId: 'c1', toolName: 'lookup', state: 'approval-requested', input: { q: 1 }, approval: { id: 'a1' } },
      { type: 'suggestions', items: [{ text: 'More?' }] },
    ]);
    // Each update is a message of its own: an earlier one still shows what it showed.
    expect(updates[2]).toMatchObject({
      text: 'Hi',
      parts: [
        { type: 'text', text: 'Hi' },
        { type: 'reasoning', text: 'The user greets.' },
      ],
    });
  });

  it('keeps a plain-text stream plain: deltas to part 0 append to text, with no parts', async () => {
    const chat = open();
    await chatConnected(chat);
    const start = hub.startStream('');
    await nextChatEvent(chat, 'message');
    hub.emitAll(Events.messageDelta, { id: start.id, seq: 1, text: 'Hel', index: 0 });
    hub.emitAll(Events.messageDelta, { id: start.id, seq: 2, text: 'lo', index: 0 });
    const update = await nextChatEvent(chat, 'message:update', (u) => u.seq === 2);
    expect(update).toEqual({ ...start, text: 'Hello', seq: 2 });
  });

  it('passes on a part change of a message no longer streaming (seq 0), and a snapshot with parts on reconnect', async () => {
    const chat = open();
    await chatConnected(chat);
    const change: MessagePartEvent = {
      id: 'm-old',
      seq: 0,
      index: 0,
      part: { type: 'tool', toolCallId: 'c', toolName: 't', state: 'approval-responded', approval: { id: 'a', approved: true } },
    };
    hub.emitAll(Events.messagePart, change);
    await expect(nextChatEvent(chat, 'message:part')).resolves.toEqual(change);

    const start = hub.startStream('');
    await nextChatEvent(chat, 'message');
    const parts: MessagePart[] = [{ type: 'reasoning', text: 'so far' }];
    hub.last.disconnect();
    await nextChatEvent(chat, 'state', (st) => st.state === 'connecting');
    const snapshot = { ...start, seq: 3, parts };
    (hub as unknown as { open: Map<string, MessageStart> }).open.set(start.id, snapshot);
    const update = await nextChatEvent(chat, 'message:update', (u) => u.id === start.id);
    expect(update).toEqual(snapshot);
  });

  it('approves: sends the decision and resolves with the recorded one; a refusal rejects with its code', async () => {
    const chat = open();
    await chatConnected(chat);
    await expect(chat.approve('m1', 'a1', false, 'too expensive')).resolves.toEqual({
      approved: false,
      reason: 'too expensive',
      decidedBy: 'u1',
      ts: 'now',
    });
    expect(hub.approvals).toEqual([{ messageId: 'm1', approvalId: 'a1', approved: false, reason: 'too expensive' }]);
    hub.approvalAck = () => ({
      ok: false,
      error: { code: 'APPROVAL_DECIDED', message: 'decided' },
      decision: { approved: false, decidedBy: 'u1', ts: 'now' },
    });
    await expect(chat.approve('m1', 'a1', true)).rejects.toMatchObject({ code: 'APPROVAL_DECIDED' });
    expect(hub.approvals[1]).toEqual({ messageId: 'm1', approvalId: 'a1', approved: true });
  });

  it('sends parts and data beside the text, and refuses the old send(text, data) shape and bad parts without sending', async () => {
    const chat = open();
    await chatConnected(chat);
    const parts: MessagePart[] = [{ type: 'file', url: 'https://example.com/a.png', mediaType: 'image/png' }];
    await chat.send('look', { data: { k: 1 }, parts });
    expect(hub.received).toEqual([{ clientMessageId: expect.any(String), text: 'look', data: { k: 1 }, parts }]);
    await expect(chat.send('x', { lang: 'en' } as never)).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    await expect(chat.send('x', { parts: {} as never })).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    await expect(chat.send('x', { parts: [{ type: 'data', name: 'n', data: 'x'.repeat(70_000) }] })).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    });
    await chat.history({ limit: 1 }); // a round trip: nothing else reached the hub
    expect(hub.received).toHaveLength(1);
  });
});
