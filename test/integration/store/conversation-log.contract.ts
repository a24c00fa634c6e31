import { v7 } from 'uuid';
import type { ConversationLog, ConversationLogLimits, LoggedMessage } from '../../../src/store/conversation-log';

/**
 * The behaviour every ConversationLog shares (docs/protocol.md, "Conversations and delivery guarantees"). memory.store.test.ts and
 * redis.store.test.ts run it; `makeLog` returns an empty log with the given limits.
 */
export function describeConversationLogContract(name: string, makeLog: (limits: ConversationLogLimits) => Promise<ConversationLog>): void {
  describe(`ConversationLog contract: ${name}`, () => {
    const limits = { maxMessages: 5, ttlS: 60 };
    let log: ConversationLog;
    beforeEach(async () => {
      log = await makeLog(limits);
    });

    let n = 0;
    const msg = (text: string, author: 'agent' | 'user' = 'agent'): LoggedMessage => ({
      id: v7(),
      ts: new Date().toISOString(),
      agentId: 'bot',
      author,
      text,
      ...(author === 'user' ? { clientMessageId: `c${++n}` } : {}),
    });
    const texts = (messages: LoggedMessage[]) => messages.map((m) => m.text);

    it('replays everything after an id in append order, messages exactly as appended', async () => {
      const all = [msg('a', 'user'), msg('b'), { ...msg('c'), data: { x: [1, 'two'] }, replyTo: 'r1' }];
      for (const m of all) await log.append('bot', 'u1', m);
      expect(await log.readAfter('bot', 'u1', all[0].id, 10)).toEqual({ ok: true, messages: all.slice(1) });
      expect(await log.readAfter('bot', 'u1', all[2].id, 10)).toEqual({ ok: true, messages: [] });
    });

    it('keeps conversations apart, per bot and per client', async () => {
      const mine = msg('mine');
      await log.append('bot', 'u1', mine);
      await log.append('bot', 'u2', msg('theirs'));
      await log.append('other-bot', 'u1', msg('other bot'));
      const later = msg('later');
      await log.append('bot', 'u1', later);
      expect(texts((await log.readBefore('bot', 'u1', undefined, 10)).messages)).toEqual(['mine', 'later']);
      expect(await log.readAfter('bot', 'u2', mine.id, 10)).toEqual({ ok: false, reason: 'unknown' });
    });

    it('appends a message id once, so a retried delivery is not logged twice', async () => {
      const first = msg('first');
      const m = msg('once');
      await log.append('bot', 'u1', first);
      await log.append('bot', 'u1', m);
      await log.append('bot', 'u1', m);
      expect(await log.readAfter('bot', 'u1', first.id, 10)).toEqual({ ok: true, messages: [m] });
    });

    it('logs a fresh message (its id stamped for the append) like any other', async () => {
      const first = msg('first');
      const fresh = msg('fresh');
      await log.append('bot', 'u1', first, true);
      await log.append('bot', 'u1', fresh, true);
      // A retry of it, not fresh, finds it logged.
      await log.append('bot', 'u1', fresh);
      expect(await log.readAfter('bot', 'u1', first.id, 10)).toEqual({ ok: true, messages: [fresh] });
    });

    it('logs a message stamped before the newest one once, in append order', async () => {
      // Stamped first, logged last: its id sorts below every id already in the log.
      const late = msg('late');
      const newest = [msg('n1'), msg('n2'), msg('n3')];
      for (const m of newest) await log.append('bot', 'u1', m);
      await log.append('bot', 'u1', late);
      await log.append('bot', 'u1', late);
      await log.append('bot', 'u1', newest[0]);
      expect(texts((await log.readBefore('bot', 'u1', undefined, 10)).messages)).toEqual(['n1', 'n2', 'n3', 'late']);
      expect(await log.readAfter('bot', 'u1', late.id, 10)).toEqual({ ok: true, messages: [] });
    });

    it('merges the bot broadcasts into every conversation by append order', async () => {
      const a = msg('a');
      await log.append('bot', 'u1', a);
      await log.append('bot', null, msg('to all 1'));
      await log.append('bot', 'u2', msg('u2 only'));
      await log.append('bot', 'u1', msg('b'));
      await log.append('bot', null, msg('to all 2'));
      expect(texts(((await log.readAfter('bot', 'u1', a.id, 10)) as { messages: LoggedMessage[] }).messages)).toEqual([
        'to all 1',
        'b',
        'to all 2',
      ]);
      const page = await log.readBefore('bot', 'u2', undefined, 10);
      expect(texts(page.messages)).toEqual(['to all 1', 'u2 only', 'to all 2']);
    });

    it('recovers from a broadcast id too', async () => {
      const all = msg('to all');
      await log.append('bot', null, all);
      await log.append('bot', 'u1', msg('after'));
      expect(texts(((await log.readAfter('bot', 'u1', all.id, 10)) as { messages: LoggedMessage[] }).messages)).toEqual(['after']);
    });

    it('refuses a recovery of more than max messages as a whole, never partly', async () => {
      const first = msg('first');
      await log.append('bot', 'u1', first);
      for (const t of ['1', '2', '3']) await log.append('bot', 'u1', msg(t));
      expect(await log.readAfter('bot', 'u1', first.id, 2)).toEqual({ ok: false, reason: 'too-many' });
      expect(texts(((await log.readAfter('bot', 'u1', first.id, 3)) as { messages: LoggedMessage[] }).messages)).toEqual(['1', '2', '3']);
    });

    it('trims to maxMessages; a trimmed id is unknown', async () => {
      const all = Array.from({ length: 7 }, (_, i) => msg(`m${i}`));
      for (const m of all) await log.append('bot', 'u1', m);
      expect(texts((await log.readBefore('bot', 'u1', undefined, 10)).messages)).toEqual(['m2', 'm3', 'm4', 'm5', 'm6']);
      expect(await log.readAfter('bot', 'u1', all[1].id, 10)).toEqual({ ok: false, reason: 'unknown' });
      expect((await log.readAfter('bot', 'u1', all[2].id, 10)).ok).toBe(true);
    });

    it('reads in order after trimming many times over, merged with broadcasts, from any id still kept', async () => {
      const mine = Array.from({ length: 23 }, (_, i) => msg(`m${i}`));
      const shared = Array.from({ length: 7 }, (_, i) => msg(`all ${i}`));
      // m0 m1 m2 all0 m3 m4 m5 all1 … m20 all6 m21 m22; each log keeps its newest five.
      for (let i = 0; i < mine.length; i++) {
        await log.append('bot', 'u1', mine[i]);
        if (i % 3 === 2) await log.append('bot', null, shared[(i - 2) / 3]);
      }
      const page = await log.readBefore('bot', 'u1', undefined, 20);
      expect([texts(page.messages), page.hasMore]).toEqual([
        ['all 2', 'all 3', 'all 4', 'all 5', 'm18', 'm19', 'm20', 'all 6', 'm21', 'm22'],
        false,
      ]);
      const older = await log.readBefore('bot', 'u1', mine[20].id, 3);
      expect([texts(older.messages), older.hasMore]).toEqual([['all 5', 'm18', 'm19'], true]);
      const after = await log.readAfter('bot', 'u1', mine[18].id, 10);
      expect(after.ok && texts(after.messages)).toEqual(['m19', 'm20', 'all 6', 'm21', 'm22']);
      expect(await log.readAfter('bot', 'u1', mine[17].id, 10)).toEqual({ ok: false, reason: 'unknown' });
    });

    it('reports a gap in the broadcasts after the id as unknown rather than replaying around it', async () => {
      const mine = msg('mine');
      await log.append('bot', 'u1', mine);
      for (let i = 0; i < 6; i++) await log.append('bot', null, msg(`all ${i}`));
      expect(await log.readAfter('bot', 'u1', mine.id, 100)).toEqual({ ok: false, reason: 'unknown' });
    });

    it('an id never logged is unknown', async () => {
      await log.append('bot', 'u1', msg('a'));
      expect(await log.readAfter('bot', 'u1', v7(), 10)).toEqual({ ok: false, reason: 'unknown' });
      expect(await log.readAfter('bot', 'nobody', v7(), 10)).toEqual({ ok: false, reason: 'unknown' });
    });

    it('pages backwards: the newest `limit` before an id, oldest first, with hasMore', async () => {
      const all = Array.from({ length: 5 }, (_, i) => msg(`m${i}`));
      for (const m of all) await log.append('bot', 'u1', m);
      const newest = await log.readBefore('bot', 'u1', undefined, 2);
      expect(newest).toEqual({ messages: all.slice(3), hasMore: true });
      const older = await log.readBefore('bot', 'u1', newest.messages[0].id, 2);
      expect(older).toEqual({ messages: all.slice(1, 3), hasMore: true });
      expect(await log.readBefore('bot', 'u1', older.messages[0].id, 2)).toEqual({ messages: all.slice(0, 1), hasMore: false });
      expect(await log.readBefore('bot', 'u1', v7(), 2)).toEqual({ messages: [], hasMore: false });
      expect(await log.readBefore('bot', 'empty', undefined, 2)).toEqual({ messages: [], hasMore: false });
    });

    it('deletes one conversation, keeping the others and the broadcasts', async () => {
      await log.append('bot', 'u1', msg('a'));
      await log.append('bot', 'u2', msg('b'));
      await log.append('bot', null, msg('all'));
      expect(await log.deleteConversation('bot', 'u1')).toBe(true);
      expect(await log.deleteConversation('bot', 'u1')).toBe(false);
      expect(texts((await log.readBefore('bot', 'u1', undefined, 10)).messages)).toEqual(['all']);
      expect(texts((await log.readBefore('bot', 'u2', undefined, 10)).messages)).toEqual(['b', 'all']);
    });

    it('deletes every conversation of a user with every bot', async () => {
      await log.append('bot', 'u1', msg('a'));
      await log.append('other', 'u1', msg('b'));
      await log.append('bot', 'u2', msg('c'));
      expect(await log.deleteUser('u1')).toBe(2);
      expect((await log.readBefore('bot', 'u1', undefined, 10)).messages).toEqual([]);
      expect((await log.readBefore('other', 'u1', undefined, 10)).messages).toEqual([]);
      expect(texts((await log.readBefore('bot', 'u2', undefined, 10)).messages)).toEqual(['c']);
      expect(await log.deleteUser('u1')).toBe(0);
    });

    it('finds a conversation started again after its erasure, so a later erasure takes it too', async () => {
      await log.append('bot', 'u1', msg('a'));
      await log.append('other', 'u1', msg('b'));
      expect(await log.deleteConversation('bot', 'u1')).toBe(true);
      expect(await log.deleteUser('u1')).toBe(1);
      await log.append('bot', 'u1', msg('again'));
      await log.append('other', 'u1', msg('again'));
      expect(await log.deleteUser('u1')).toBe(2);
      expect(await log.deleteConversation('bot', 'u1')).toBe(false);
      expect((await log.readBefore('other', 'u1', undefined, 10)).messages).toEqual([]);
    });
  });
}
