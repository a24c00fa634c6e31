import { textDelta } from './stream-store.contract';
import { sleep } from '../../helpers/wait';
import { v7 } from 'uuid';
import { QuotaExceededError, type BotQuota } from '../../../src/store/bot-quota';
import type { ConversationLogLimits, LoggedMessage } from '../../../src/store/conversation-log';
import type { Store } from '../../../src/store/store';

/**
 * The storage quota per bot (docs/operations.md, "Storage quotas per bot"), the same on every store:
 * memory.store.test.ts and redis-store.suite.ts run it (one Redis server and a Redis Cluster);
 * `make` returns an empty store with the quota and log limits.
 */
export function describeQuotaContract(name: string, make: (quota: BotQuota, limits: ConversationLogLimits) => Promise<Store>): void {
  describe(`storage quota per bot: ${name}`, () => {
    const limits = { maxMessages: 20, ttlS: 60 };
    const msg = (agentId: string, text: string): LoggedMessage => ({
      id: v7(),
      ts: new Date().toISOString(),
      agentId,
      author: 'agent',
      text,
    });
    const texts = async (store: Store, agentId: string, clientId: string) =>
      (await store.log.readBefore(agentId, clientId, undefined, 50)).messages.map((m) => m.text);
    const bounds = { maxBytes: 100_000, ttlMs: 60_000 };
    const KB = 1024;

    it("drops the bot's own least recently written conversation past maxConversations, never another bot's", async () => {
      const store = await make({ maxBytes: 10_000_000, maxConversations: 3, maxOpenStreams: 10 }, limits);
      await store.log.append('victim', 'v1', msg('victim', 'keep me'));
      for (let i = 0; i < 10; i++) await store.log.append('bot', `junk${i}`, msg('bot', `junk ${i}`));
      expect(await texts(store, 'victim', 'v1')).toEqual(['keep me']);
      for (let i = 0; i < 7; i++) expect(await texts(store, 'bot', `junk${i}`)).toEqual([]);
      for (let i = 7; i < 10; i++) expect(await texts(store, 'bot', `junk${i}`)).toEqual([`junk ${i}`]);
    });

    it("makes room in bytes by dropping the bot's own oldest conversations; other bots keep theirs", async () => {
      const store = await make({ maxBytes: 64 * KB, maxConversations: 1000, maxOpenStreams: 10 }, limits);
      await store.log.append('victim', 'v1', msg('victim', 'v'.repeat(40 * KB)));
      await store.log.append('bot', 'own', msg('bot', 'first'));
      await store.log.append('bot', 'own', msg('bot', 'second'));
      for (let i = 0; i < 20; i++) await store.log.append('bot', `junk${i}`, msg('bot', 'x'.repeat(20 * KB)));
      expect(await texts(store, 'victim', 'v1')).toEqual(['v'.repeat(40 * KB)]);
      // 20 KiB each: the newest three fit 64 KiB, older ones (and 'own') were dropped.
      expect(await texts(store, 'bot', 'own')).toEqual([]);
      for (let i = 0; i < 17; i++) expect(await texts(store, 'bot', `junk${i}`)).toEqual([]);
      expect(await texts(store, 'bot', 'junk19')).toHaveLength(1);
      // The conversation written to is kept: a second message to it drops the others first.
      await store.log.append('bot', 'junk19', msg('bot', 'y'.repeat(20 * KB)));
      expect(await texts(store, 'bot', 'junk19')).toHaveLength(2);
    });

    it('refuses, writing nothing, a message that does not fit even after dropping every other conversation', async () => {
      const store = await make({ maxBytes: 16 * KB, maxConversations: 1000, maxOpenStreams: 10 }, limits);
      await store.log.append('bot', 'u1', msg('bot', 'small'));
      const big = msg('bot', 'x'.repeat(20 * KB));
      await expect(store.log.append('bot', 'u2', big)).rejects.toEqual(expect.any(QuotaExceededError));
      expect(await texts(store, 'bot', 'u2')).toEqual([]);
      // Nothing was dropped for a message that could not fit anyway.
      expect(await texts(store, 'bot', 'u1')).toEqual(['small']);
      // The client message intake refuses it too, leaving no dedupe record behind (a retry is fresh).
      await store.presence.addRuntime('bot', { socketId: 'rt', replicaId: 'A' });
      const key = { agentId: 'bot', sub: 'u3', clientMessageId: 'c1' };
      const intake = await store.intake.admit({
        key,
        record: { id: big.id, ts: big.ts, delivered: false },
        ttlS: 60,
        clientId: 'u3',
        message: { ...big, author: 'user', clientMessageId: 'c1' },
        subscribersOf: null,
        handoff: null,
      });
      expect(intake).toMatchObject({ quota: true, logged: false, handedTo: null });
      expect(await store.dedupe.find(key)).toBeNull();
      expect(await texts(store, 'bot', 'u3')).toEqual([]);
      // Another bot is not held back.
      await store.log.append('other', 'u2', msg('other', 'x'.repeat(15 * KB)));
      expect(await texts(store, 'other', 'u2')).toHaveLength(1);
    });

    it('counts open streams per bot over every caller; ending or erasing one frees its place', async () => {
      const store = await make({ maxBytes: 10_000_000, maxConversations: 1000, maxOpenStreams: 2 }, limits);
      const open = (agentId: string, clientId: string, owner: string) => {
        const message = msg(agentId, '');
        return store.streams.open({ message, clientId, owner }, bounds, true).then(() => message);
      };
      const first = await open('bot', 'u1', 'socket-a');
      await open('bot', 'u2', 'socket-b');
      await expect(open('bot', 'u3', 'socket-c')).rejects.toMatchObject({ name: 'QuotaExceededError', limit: 'streams' });
      expect(await store.streams.openOf('bot', 'u3')).toEqual([]);
      expect(await texts(store, 'bot', 'u3')).toEqual([]);
      await open('other', 'u3', 'socket-c');
      await store.streams.end('bot', first.id, { status: 'complete' }, true);
      await open('bot', 'u3', 'socket-c');
      await store.log.deleteConversation('bot', 'u3');
      await open('bot', 'u4', 'socket-c');
    });

    it("counts open streams' text: past the quota a delta gets quota after the bot's other conversations went", async () => {
      const store = await make({ maxBytes: 64 * KB, maxConversations: 1000, maxOpenStreams: 10 }, limits);
      await store.log.append('bot', 'old', msg('bot', 'o'.repeat(20 * KB)));
      await store.log.append('victim', 'v1', msg('victim', 'v'.repeat(60 * KB)));
      const start = msg('bot', '');
      await store.streams.open({ message: start, clientId: 'u1', owner: 'socket-a' }, bounds, true);
      const target = { agentId: 'bot', id: start.id, clientId: 'u1' };
      const delta = (text: string) => store.streams.append(target, textDelta(text), bounds, null, null, true);
      expect(await delta('a'.repeat(30 * KB))).toEqual({ ok: true, seq: 1 });
      expect(await delta('b'.repeat(30 * KB))).toEqual({ ok: true, seq: 2 });
      expect(await texts(store, 'bot', 'old')).toEqual([]);
      expect(await delta('c'.repeat(10 * KB))).toEqual({ ok: false, reason: 'quota' });
      expect(await store.streams.get('bot', start.id)).toMatchObject({ seq: 2, text: 'a'.repeat(30 * KB) + 'b'.repeat(30 * KB) });
      expect(await texts(store, 'victim', 'v1')).toHaveLength(1);
      // A reply does not fit either while the stream holds the quota; once it ended, its final does.
      await expect(store.log.append('bot', 'u2', msg('bot', 'r'.repeat(10 * KB)))).rejects.toEqual(expect.any(QuotaExceededError));
      const ended = await store.streams.end('bot', start.id, { status: 'complete' }, true);
      expect(ended?.final.text).toHaveLength(60 * KB);
      expect((await texts(store, 'bot', 'u1'))[0]).toHaveLength(60 * KB);
    });

    it('erasing a conversation or a user ends their open streams: later deltas and ends write nothing back', async () => {
      const store = await make({ maxBytes: 10_000_000, maxConversations: 1000, maxOpenStreams: 10 }, limits);
      const opened = async (clientId: string) => {
        const message = msg('bot', '');
        await store.streams.open({ message, clientId, owner: 'socket-a' }, bounds, true);
        const target = { agentId: 'bot', id: message.id, clientId };
        expect(await store.streams.append(target, textDelta('said before'), bounds, null, null, true)).toEqual({ ok: true, seq: 1 });
        return target;
      };
      const conversation = await opened('u1');
      const user = await opened('u2');
      await store.log.append('other', 'u2', msg('other', 'with another bot'));
      expect(await store.log.deleteConversation('bot', 'u1')).toBe(true);
      expect(await store.log.deleteUser('u2')).toBe(2);
      for (const target of [conversation, user]) {
        expect(await store.streams.append(target, textDelta(' and after'), bounds, null, null, true)).toEqual({
          ok: false,
          reason: 'not-found',
        });
        expect(await store.streams.end('bot', target.id, { status: 'complete' }, true)).toBeNull();
        expect(await store.streams.get('bot', target.id)).toBeNull();
        expect(await texts(store, 'bot', target.clientId)).toEqual([]);
        expect(await store.streams.openOf('bot', target.clientId)).toEqual([]);
      }
      expect(await texts(store, 'other', 'u2')).toEqual([]);
    });

    it('gives back the bytes of expired conversations', async () => {
      const store = await make({ maxBytes: 64 * KB, maxConversations: 1000, maxOpenStreams: 10 }, { maxMessages: 20, ttlS: 1 });
      await store.log.append('bot', 'gone', msg('bot', 'x'.repeat(50 * KB)));
      await sleep(QUOTA_EXPIRY_WAIT_MS);
      // Had the expired conversation still counted, this one would not fit beside the kept one.
      await store.log.append('bot', 'kept', msg('bot', 'k'.repeat(30 * KB)));
      await store.log.append('bot', 'new', msg('bot', 'n'.repeat(30 * KB)));
      expect(await texts(store, 'bot', 'kept')).toHaveLength(1);
      expect(await texts(store, 'bot', 'new')).toHaveLength(1);
    });
  });
}

/** A conversation's TTL (1 s) and the grace Redis's ledger gives replicas' clocks before it forgets an expired one. */
const QUOTA_EXPIRY_WAIT_MS = 1000 + 3000 + 300;
