import { sleep } from '../../helpers/wait';
import { v7 } from 'uuid';
import type { ConversationLog, ConversationLogLimits, LoggedMessage } from '../../../src/store/conversation-log';
import type { StreamStore } from '../../../src/store/stream-store';
import { encodeChange } from '../../../src/store/stream-changes';
import type { MessagePart, PartChange } from '../../../src/protocol';

/** A change as the relay hands it to a store; bytes: what it counts against the bound. */
export const encoded = (change: PartChange, bytes = change.kind === 'delta' ? Buffer.byteLength(change.text) : 0) => ({
  record: encodeChange(change),
  bytes,
});
/** A plain text delta: to the stream's one text part. */
export const textDelta = (text: string) => encoded({ kind: 'delta', index: 0, text });

/**
 * The behaviour every StreamStore shares, with the conversation log it writes (docs/streaming.md):
 * memory.store.test.ts and redis-store.suite.ts run it; `make` returns empty stores with the limits.
 */
export function describeStreamStoreContract(
  name: string,
  make: (limits: ConversationLogLimits) => Promise<{ streams: StreamStore; log: ConversationLog }>,
): void {
  describe(`StreamStore contract: ${name}`, () => {
    const bounds = { maxBytes: 20, ttlMs: 60_000 };
    let streams: StreamStore;
    let log: ConversationLog;
    beforeEach(async () => {
      ({ streams, log } = await make({ maxMessages: 50, ttlS: 60 }));
    });

    const msg = (text: string, author: 'agent' | 'user' = 'agent'): LoggedMessage => ({
      id: v7(),
      ts: new Date().toISOString(),
      agentId: 'bot',
      author,
      text,
      ...(author === 'user' ? { clientMessageId: `c-${text}` } : {}),
    });
    const open = async (extra: Partial<LoggedMessage> = {}, clientId = 'u1') => {
      const message = { ...msg(''), ...extra };
      await streams.open({ message, clientId, owner: 'sock-1' }, bounds, true);
      return message;
    };
    /** A delta from the owner, which renews the expiry. */
    const delta = (id: string, text: string, renew = true) =>
      streams.append({ agentId: 'bot', id, clientId: 'u1' }, textDelta(text), bounds, null, null, renew);
    const history = async (limit = 50) => (await log.readBefore('bot', 'u1', undefined, limit)).messages;

    it('opens a stream, logging its start once, and lists it with its text and seq', async () => {
      const start = await open({ replyTo: 'm0', data: { k: [1] } });
      expect(await streams.openOf('bot', 'u1')).toEqual([{ message: start, clientId: 'u1', owner: 'sock-1', text: '', parts: [], seq: 0 }]);
      expect(await streams.openOf('bot', 'u2')).toEqual([]);
      expect(await history()).toEqual([{ ...start, streaming: true }]);
      expect(await delta(start.id, 'Hel')).toEqual({ ok: true, seq: 1 });
      expect(await delta(start.id, 'lo ✓')).toEqual({ ok: true, seq: 2 });
      expect(await streams.get('bot', start.id)).toMatchObject({ text: 'Hello ✓', seq: 2, clientId: 'u1', owner: 'sock-1' });
    });

    it('refuses a delta past maxBytes and one to a stream that is not open, changing nothing', async () => {
      const start = await open();
      await delta(start.id, 'x'.repeat(18));
      expect(await delta(start.id, 'abc')).toEqual({ ok: false, reason: 'too-large' });
      const missing = v7();
      expect(await delta(missing, 'abc')).toEqual({ ok: false, reason: 'not-found' });
      expect(await streams.get('bot', missing)).toBeNull();
      expect(await streams.get('bot', start.id)).toMatchObject({ text: 'x'.repeat(18), seq: 1 });
      expect(await streams.get('other-bot', start.id)).toBeNull();
      expect(await delta(start.id, 'yy')).toEqual({ ok: true, seq: 2 });
      expect(await streams.get('bot', start.id)).toMatchObject({ text: `${'x'.repeat(18)}yy`, seq: 2 });
    });

    it('keeps a long stream of multibyte deltas whole, and an unpaired surrogate as it came', async () => {
      const start = await open();
      const large = { maxBytes: 1 << 20, ttlMs: 60_000 };
      const pieces = Array.from({ length: 3000 }, (_, i) => ['añ', '✓ ', '😀', `${i} `][i % 4]);
      for (const piece of pieces)
        await streams.append({ agentId: 'bot', id: start.id, clientId: 'u1' }, textDelta(piece), large, null, null, false);
      expect(await streams.get('bot', start.id)).toMatchObject({ text: pieces.join(''), seq: 3000 });
      const lone = await open();
      // Changes are kept as JSON, which escapes a lone surrogate: it reads back as it was written.
      await streams.append({ agentId: 'bot', id: lone.id, clientId: 'u1' }, textDelta('a\ud800b'), large, null, null, false);
      expect(await streams.get('bot', lone.id)).toMatchObject({ text: 'a\ud800b', seq: 1 });
    });

    it('refuses a first delta past maxBytes, changing nothing: the next one is the first', async () => {
      const start = await open();
      expect(await delta(start.id, 'x'.repeat(21))).toEqual({ ok: false, reason: 'too-large' });
      expect(await streams.get('bot', start.id)).toMatchObject({ text: '', seq: 0 });
      expect(await delta(start.id, 'ok')).toEqual({ ok: true, seq: 1 });
      expect(await streams.openOf('bot', 'u1')).toEqual([
        { message: start, clientId: 'u1', owner: 'sock-1', text: 'ok', parts: [{ type: 'text', text: 'ok' }], seq: 1 },
      ]);
    });

    it('ends a stream once, logging its final in place of the start: status kept unless complete', async () => {
      const before = msg('question', 'user');
      await log.append('bot', 'u1', before);
      const start = await open({ replyTo: before.id, data: { a: 1 } });
      await delta(start.id, 'part');
      const after = msg('later');
      await log.append('bot', 'u1', after);
      const ends = await Promise.all([
        streams.end('bot', start.id, { status: 'cancelled' }, true),
        streams.end('bot', start.id, { status: 'timeout' }, true),
      ]);
      expect(ends.filter((e) => e !== null)).toHaveLength(1);
      const ended = ends.find((e) => e !== null)!;
      const final = {
        id: start.id,
        ts: start.ts,
        agentId: 'bot',
        author: 'agent',
        text: 'part',
        data: { a: 1 },
        replyTo: before.id,
        status: ended.final.status,
      };
      expect(ended).toEqual({ final, seq: 1, clientId: 'u1', published: false });
      expect(await delta(start.id, 'more')).toEqual({ ok: false, reason: 'not-found' });
      expect(await streams.openOf('bot', 'u1')).toEqual([]);
      expect(await history()).toEqual([before, final, after]);
      // A replay from before the start has the final at the start's place, once.
      expect(await log.readAfter('bot', 'u1', before.id, 10)).toEqual({ ok: true, messages: [final, after] });
    });

    it('ends with the text and data the runtime gives, and no status when complete', async () => {
      const start = await open({ data: { a: 1 } });
      await delta(start.id, 'draft');
      const ended = await streams.end('bot', start.id, { status: 'complete', text: 'fixed "text"', data: { b: [] } }, true);
      expect(ended?.final).toEqual({ id: start.id, ts: start.ts, agentId: 'bot', author: 'agent', text: 'fixed "text"', data: { b: [] } });
      expect(await history()).toEqual([ended!.final]);
    });

    it('replays an open stream not at all, and an ended one at its end marker when its start was before the cursor', async () => {
      const first = msg('first');
      await log.append('bot', 'u1', first);
      const s1 = await open();
      const seen = msg('seen');
      await log.append('bot', 'u1', seen);
      const s2 = await open();
      const missed = msg('missed');
      await log.append('bot', 'u1', missed);
      // s2 is still open: the resume sends it, not the replay.
      expect(await log.readAfter('bot', 'u1', seen.id, 10)).toEqual({ ok: true, messages: [missed] });
      await delta(s1.id, 'one');
      const end1 = await streams.end('bot', s1.id, { status: 'complete' }, true);
      // s1 started before the cursor and ended after it: its final comes at the end marker's place.
      expect(await log.readAfter('bot', 'u1', seen.id, 10)).toEqual({ ok: true, messages: [missed, end1!.final] });
      // From before both: s1 at its start, once; s2 still open.
      expect(await log.readAfter('bot', 'u1', first.id, 10)).toEqual({ ok: true, messages: [end1!.final, seen, missed] });
      // A cursor naming an ended streamed message stands at its end marker.
      expect(await log.readAfter('bot', 'u1', s1.id, 10)).toEqual({ ok: true, messages: [] });
      const end2 = await streams.end('bot', s2.id, { status: 'interrupted' }, true);
      expect(await log.readAfter('bot', 'u1', s1.id, 10)).toEqual({ ok: true, messages: [end2!.final] });
      expect(await log.readAfter('bot', 'u1', s1.id, 0)).toEqual({ ok: false, reason: 'too-many' });
    });

    it('counts history pages in messages, never showing end markers, and pages before a streamed message from its start', async () => {
      const all: LoggedMessage[] = [];
      for (let i = 0; i < 4; i++) {
        const start = await open();
        all.push((await streams.end('bot', start.id, { status: 'complete', text: `s${i}` }, true))!.final);
        const m = msg(`m${i}`);
        await log.append('bot', 'u1', m);
        all.push(m);
      }
      const page = await log.readBefore('bot', 'u1', undefined, 3);
      expect(page).toEqual({ messages: all.slice(-3), hasMore: true });
      const older = await log.readBefore('bot', 'u1', page.messages[0].id, 3);
      expect(older).toEqual({ messages: all.slice(2, 5), hasMore: true });
      expect(await log.readBefore('bot', 'u1', all[2].id, 10)).toEqual({ messages: all.slice(0, 2), hasMore: false });
    });

    it('keeps feedback on bot messages only, replaced by a later rating and withdrawn with null', async () => {
      const user = msg('hi', 'user');
      const reply = msg('hello');
      await log.append('bot', 'u1', user);
      await log.append('bot', 'u1', reply);
      const start = await open();
      const ts = new Date().toISOString();
      expect(await log.setFeedback('bot', 'u1', reply.id, { rating: 'up', ts })).toBe(true);
      expect(await log.setFeedback('bot', 'u1', user.id, { rating: 'up', ts })).toBe(false);
      expect(await log.setFeedback('bot', 'u1', v7(), { rating: 'up', ts })).toBe(false);
      expect(await log.setFeedback('bot', 'u2', reply.id, { rating: 'up', ts })).toBe(false);
      expect(await log.setFeedback('bot', 'u1', start.id, { rating: 'down', comment: 'slow', ts })).toBe(true);
      const final = (await streams.end('bot', start.id, { status: 'complete', text: 'done' }, true))!.final;
      expect(await history()).toEqual([
        user,
        { ...reply, feedback: { rating: 'up', ts } },
        { ...final, feedback: { rating: 'down', comment: 'slow', ts } },
      ]);
      expect(await log.setFeedback('bot', 'u1', reply.id, { rating: 'down', ts })).toBe(true);
      expect(await log.setFeedback('bot', 'u1', start.id, null)).toBe(true);
      expect(await history()).toEqual([user, { ...reply, feedback: { rating: 'down', ts } }, final]);
      expect(await log.readAfter('bot', 'u1', user.id, 10)).toEqual({
        ok: true,
        messages: [{ ...reply, feedback: { rating: 'down', ts } }, final],
      });
    });

    it('renews the expiry of a stream and its conversation only when a delta asks', async () => {
      const short = { maxBytes: 20, ttlMs: 1000 };
      const [kept, left] = [msg(''), msg('')];
      for (const message of [kept, left]) await streams.open({ message, clientId: 'u1', owner: 's' }, short, false);
      await sleep(600);
      const append = (id: string, renew: boolean) =>
        streams.append({ agentId: 'bot', id, clientId: 'u1' }, textDelta('x'), short, null, null, renew);
      expect(await append(kept.id, true)).toEqual({ ok: true, seq: 1 });
      expect(await append(left.id, false)).toEqual({ ok: true, seq: 1 });
      // Past the first expiry, short of the renewed one.
      await sleep(600);
      expect(await streams.get('bot', left.id)).toBeNull();
      expect(await streams.openOf('bot', 'u1')).toEqual([
        { message: kept, clientId: 'u1', owner: 's', text: 'x', parts: [{ type: 'text', text: 'x' }], seq: 1 },
      ]);
    });

    describe('parts (docs/parts.md)', () => {
      const target = (id: string) => ({ agentId: 'bot', id, clientId: 'u1' });
      const change = (id: string, c: PartChange, bytes?: number) =>
        streams.append(target(id), encoded(c, bytes), bounds, null, null, false);
      const large = { maxBytes: 1 << 20, ttlMs: 60_000 };
      const tool: MessagePart = { type: 'tool', toolCallId: 'c1', toolName: 'search', state: 'input-streaming' };

      it('holds text, reasoning, a tool call whose input streams, and updates, each one seq, in order', async () => {
        const start = await open({
          text: 'Hi',
          parts: [
            { type: 'reasoning', text: 'think' },
            { type: 'text', text: 'Hi' },
          ],
        });
        const go = (c: PartChange) => streams.append(target(start.id), encoded(c, 1), large, null, null, false);
        expect(await go({ kind: 'delta', index: 0, text: 'ing' })).toEqual({ ok: true, seq: 1 });
        expect(await go({ kind: 'part', part: tool })).toEqual({ ok: true, seq: 2 });
        expect(await go({ kind: 'delta', index: 2, text: '{"q":' })).toEqual({ ok: true, seq: 3 });
        expect(await go({ kind: 'delta', index: 2, text: '"x\n"}' })).toEqual({ ok: true, seq: 4 });
        expect(await go({ kind: 'update', index: 2, patch: { state: 'input-available', input: { q: 'x\n' } } })).toEqual({
          ok: true,
          seq: 5,
        });
        expect(await go({ kind: 'delta', index: 1, text: ' there' })).toEqual({ ok: true, seq: 6 });
        expect(await go({ kind: 'delta', index: 3, text: 'more' })).toEqual({ ok: true, seq: 7 });
        const parts: MessagePart[] = [
          { type: 'reasoning', text: 'thinking' },
          { type: 'text', text: 'Hi there' },
          { ...tool, state: 'input-available', inputText: '{"q":"x\n"}', input: { q: 'x\n' } },
          { type: 'text', text: 'more' },
        ];
        expect(await streams.get('bot', start.id)).toMatchObject({ text: 'Hi theremore', parts, seq: 7 });
        expect(await streams.openOf('bot', 'u1')).toEqual([
          { message: start, clientId: 'u1', owner: 'sock-1', text: 'Hi theremore', parts, seq: 7 },
        ]);
        const ended = await streams.end('bot', start.id, { status: 'complete' }, true);
        const final = { id: start.id, ts: start.ts, agentId: 'bot', author: 'agent', text: 'Hi theremore', parts };
        expect(ended).toEqual({ final, seq: 7, clientId: 'u1', published: false });
        expect(await history()).toEqual([final]);
      });

      it('refuses a change past maxBytes whatever its kind, changing nothing; a change of 0 bytes is not bounded', async () => {
        const start = await open();
        expect(await change(start.id, { kind: 'part', part: tool }, 15)).toEqual({ ok: true, seq: 1 });
        expect(await change(start.id, { kind: 'update', index: 0, patch: { title: 'big' } }, 6)).toEqual({
          ok: false,
          reason: 'too-large',
        });
        expect(await change(start.id, { kind: 'delta', index: 0, text: '123456' })).toEqual({ ok: false, reason: 'too-large' });
        expect(await streams.get('bot', start.id)).toMatchObject({ parts: [tool], seq: 1 });
        const decided = { state: 'approval-responded', approval: { id: 'a', approved: true } };
        expect(await change(start.id, { kind: 'update', index: 0, patch: decided }, 0)).toEqual({ ok: true, seq: 2 });
        expect(await streams.get('bot', start.id)).toMatchObject({ parts: [{ ...tool, ...decided }], seq: 2 });
      });

      it('ends with the parts the runtime gives (the text theirs), or a text that replaces the text parts only', async () => {
        const a = await open({
          text: 'draft',
          parts: [
            { type: 'reasoning', text: 'r' },
            { type: 'text', text: 'draft' },
          ],
        });
        const withParts = await streams.end('bot', a.id, { status: 'complete', parts: [{ type: 'text', text: 'x' }, tool] }, true);
        expect(withParts?.final).toMatchObject({ text: 'x', parts: [{ type: 'text', text: 'x' }, tool] });
        const b = await open({
          text: 'draft',
          parts: [
            { type: 'reasoning', text: 'r' },
            { type: 'text', text: 'draft' },
          ],
        });
        const withText = await streams.end('bot', b.id, { status: 'complete', text: 'final' }, true);
        expect(withText?.final).toMatchObject({
          text: 'final',
          parts: [
            { type: 'reasoning', text: 'r' },
            { type: 'text', text: 'final' },
          ],
        });
        // A plain text stream stays plain: no parts on its final.
        const c = await open();
        await delta(c.id, 'plain');
        expect((await streams.end('bot', c.id, { status: 'complete' }, true))?.final).not.toHaveProperty('parts');
      });
    });

    it('finds a bot message of the conversation (a stream by its final once ended) and keeps a replacement for every read', async () => {
      const user = msg('hi', 'user');
      const reply = { ...msg(''), parts: [{ type: 'source', sourceId: 's', url: 'https://example.com' }] as MessagePart[] };
      await log.append('bot', 'u1', user);
      await log.append('bot', 'u1', reply);
      expect(await log.findBotMessage('bot', 'u1', reply.id)).toEqual(reply);
      expect(await log.findBotMessage('bot', 'u1', user.id)).toBeNull();
      expect(await log.findBotMessage('bot', 'u2', reply.id)).toBeNull();
      expect(await log.findBotMessage('bot', 'u1', v7())).toBeNull();
      const start = await open();
      expect(await log.findBotMessage('bot', 'u1', start.id)).toEqual(start);
      const final = (await streams.end('bot', start.id, { status: 'complete', text: 'done' }, true))!.final;
      expect(await log.findBotMessage('bot', 'u1', start.id)).toEqual(final);
      const changed = { ...reply, parts: [{ type: 'source', sourceId: 't' }] as MessagePart[] };
      expect(await log.replaceBotMessage('bot', 'u1', changed)).toBe(true);
      expect(await log.replaceBotMessage('bot', 'u1', { ...user, text: 'x' })).toBe(false);
      expect(await log.replaceBotMessage('bot', 'u2', changed)).toBe(false);
      expect(await history()).toEqual([user, changed, final]);
      expect(await log.readAfter('bot', 'u1', user.id, 10)).toEqual({ ok: true, messages: [changed, final] });
    });

    it('opens and ends streams without logging them when the log is off', async () => {
      const message = msg('');
      await streams.open({ message, clientId: 'u1', owner: 's' }, bounds, false);
      expect(await streams.openOf('bot', 'u1')).toHaveLength(1);
      expect((await streams.end('bot', message.id, { status: 'complete' }, false))?.final.text).toBe('');
      expect(await history()).toEqual([]);
    });
  });
}
