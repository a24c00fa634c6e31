import { v7 } from 'uuid';
import { MemoryConversationLog } from '../../../src/store/memory/memory-conversation.store';
import { MemoryDedupeStore } from '../../../src/store/memory/memory-dedupe.store';
import { MemoryStore } from '../../../src/store/memory/memory.store';
import { describeStoreContract } from './store.contract';
import { describeConversationLogContract } from './conversation-log.contract';
import { describeStreamStoreContract, textDelta } from './stream-store.contract';
import { describeQuotaContract } from './quota.contract';
import { describeControlStoreContract } from './control-store.contract';
import { MemoryControlStore } from '../../../src/store/memory/memory-control.store';
import { exposedGc } from '../../helpers/gc';
import { sleep } from '../../helpers/wait';

describeStoreContract('memory', async () => new MemoryStore());

describeQuotaContract('memory', async (quota, limits) => new MemoryStore({ quota, limits }));
describeControlStoreContract('memory', async () => {
  const store = new MemoryControlStore();
  return [store, store];
});

describe('MemoryDedupeStore', () => {
  it('bounds its records by count as well as by TTL, dropping the least recently used first', async () => {
    const dedupe = new MemoryDedupeStore(3);
    const record = (id: string) => ({ id, ts: '2025-01-01T00:00:00.000Z', delivered: false });
    const key = (clientMessageId: string) => ({ agentId: 'bot', sub: 'u1', clientMessageId });
    for (const id of ['a', 'b', 'c']) expect(await dedupe.claim(key(id), record(id), 600)).toBeNull();
    expect(await dedupe.claim(key('a'), record('other'), 600)).toEqual(record('a')); // a is now the most recent
    expect(await dedupe.claim(key('d'), record('d'), 600)).toBeNull(); // evicts b
    expect(dedupe.size).toBe(3);
    expect(await dedupe.claim(key('b'), record('b2'), 600)).toBeNull();
    expect(await dedupe.claim(key('a'), record('x'), 600)).toEqual(record('a'));
  });

  it('marks a record delivered in place, restarting its TTL, and stores a mark whose claim was dropped', async () => {
    const dedupe = new MemoryDedupeStore(10);
    const key = { agentId: 'bot', sub: 'u1', clientMessageId: 'c1' };
    const record = { id: 'id-1', ts: '2025-01-01T00:00:00.000Z', delivered: false };
    expect(await dedupe.claim(key, record, 1)).toBeNull();
    await dedupe.markDelivered(key, record, 60);
    expect(dedupe.size).toBe(1);
    await sleep(1100);
    expect(await dedupe.claim(key, { ...record, id: 'id-2' }, 60)).toEqual({ ...record, delivered: true });
    const lost = { ...key, clientMessageId: 'c2' };
    await dedupe.markDelivered(lost, { ...record, id: 'id-3' }, 60);
    expect(await dedupe.claim(lost, { ...record, id: 'id-4' }, 60)).toEqual({ ...record, id: 'id-3', delivered: true });
  });

  it('bounds its records by bytes too, the earliest written going first when keys run long', async () => {
    // Each record here takes 8 + ~76 (key) + 2 (id) + 24 (ts) bytes: the 400-byte arena holds three.
    const dedupe = new MemoryDedupeStore(10, 400);
    const record = (id: string) => ({ id, ts: '2025-01-01T00:00:00.000Z', delivered: false });
    const key = (clientMessageId: string) => ({ agentId: 'bot', sub: 'u'.repeat(60), clientMessageId });
    for (const id of ['a', 'b', 'c']) expect(await dedupe.claim(key(id), record(id), 600)).toBeNull();
    expect(dedupe.size).toBe(3);
    expect(await dedupe.claim(key('d'), record('d'), 600)).toBeNull(); // a's bytes go
    expect(dedupe.size).toBe(3);
    expect(await dedupe.claim(key('b'), record('other'), 600)).toEqual(record('b'));
    expect(await dedupe.claim(key('a'), record('a2'), 600)).toBeNull();
  });

  it('refuses a record larger than its whole arena with a clear error, keeping the rest', async () => {
    const dedupe = new MemoryDedupeStore(2, 200);
    const record = { id: 'id-1', ts: '2025-01-01T00:00:00.000Z', delivered: false };
    const key = { agentId: 'bot', sub: 'u1', clientMessageId: 'c1' };
    expect(await dedupe.claim(key, record, 600)).toBeNull();
    await expect(dedupe.claim({ ...key, sub: 's'.repeat(300) }, record, 600)).rejects.toThrow(/does not fit a 200-byte arena/);
    expect(dedupe.size).toBe(1);
    // The refused record's slot went back: two more fit, the first of them evicting the oldest.
    expect(await dedupe.claim({ ...key, clientMessageId: 'c2' }, record, 600)).toBeNull();
    expect(await dedupe.claim({ ...key, clientMessageId: 'c3' }, record, 600)).toBeNull();
    expect(dedupe.size).toBe(2);
    expect(await dedupe.claim({ ...key, clientMessageId: 'c3' }, { ...record, id: 'other' }, 600)).toEqual(record);
  });

  describe('on a clock of its own', () => {
    const t0 = Date.parse('2026-01-01T00:00:00.000Z');
    const record = (id: string) => ({ id, ts: '2026-01-01T00:00:00.000Z', delivered: false });
    const key = (clientMessageId: string) => ({ agentId: 'bot', sub: 'u1', clientMessageId });
    beforeEach(() => jest.useFakeTimers({ now: t0 }));
    afterEach(() => jest.useRealTimers());

    it('sweeps expired records from the oldest end when a new one is stored, freeing their slots', async () => {
      const dedupe = new MemoryDedupeStore(3);
      expect(await dedupe.claim(key('a'), record('a'), 1)).toBeNull();
      expect(await dedupe.claim(key('b'), record('b'), 1)).toBeNull();
      jest.setSystemTime(t0 + 1500);
      expect(await dedupe.claim(key('c'), record('c'), 60)).toBeNull();
      expect(dedupe.size).toBe(1);
      expect(await dedupe.claim(key('a'), record('a2'), 60)).toBeNull();
      expect(await dedupe.claim(key('c'), record('other'), 60)).toEqual(record('c'));
    });

    it('forgets everything on clear and fills again', async () => {
      const dedupe = new MemoryDedupeStore(2);
      await dedupe.claim(key('a'), record('a'), 60);
      await dedupe.markDelivered(key('b'), record('b'), 60);
      dedupe.clear();
      expect(dedupe.size).toBe(0);
      expect(await dedupe.claim(key('b'), record('b2'), 60)).toBeNull();
      expect(await dedupe.claim(key('a'), record('a2'), 60)).toBeNull();
      expect(await dedupe.claim(key('b'), record('other'), 60)).toEqual(record('b2'));
    });
  });
});

describeConversationLogContract(
  'memory',
  async (limits) => new MemoryConversationLog(limits, { maxConversations: 100, maxMessages: 1000 }),
);

describeStreamStoreContract('memory', async (limits) => {
  const store = new MemoryStore({ limits });
  return { streams: store.streams, log: store.log };
});

describe('MemoryStreamStore', () => {
  it("holds an open stream's text outside the V8 heap, not as two heap objects per delta", async () => {
    // A rope (`text += delta`) kept about 34 bytes of heap per delta until the stream ended
    // (docs/benchmarks.md, "On a quiet machine").
    const gc = exposedGc();
    const { streams } = new MemoryStore();
    const bounds = { maxBytes: 1 << 20, ttlMs: 60_000 };
    const message = { id: v7(), ts: new Date().toISOString(), agentId: 'bot', author: 'agent' as const, text: '' };
    await streams.open({ message, clientId: 'u1', owner: 'sock-1' }, bounds, false);
    const target = { agentId: 'bot', id: message.id, clientId: 'u1' };
    gc();
    const before = process.memoryUsage().heapUsed;
    const deltas = 20_000;
    for (let i = 0; i < deltas; i++) await streams.append(target, textDelta(`t${i % 10}`), bounds, null, null, false);
    gc();
    const perDelta = (process.memoryUsage().heapUsed - before) / deltas;
    expect(perDelta).toBeLessThan(5);
    expect((await streams.get('bot', message.id))?.text).toHaveLength(2 * deltas);
  });
});

describe('MemoryConversationLog bounds', () => {
  const msg = (text: string) => ({ id: v7(), ts: new Date().toISOString(), agentId: 'bot', author: 'agent' as const, text });

  describe('over all bots, under their quotas (a safety net)', () => {
    const quota = { maxBytes: 100 * 2 ** 20, maxConversations: 1000, maxOpenStreams: 10 };
    const texts = async (log: MemoryConversationLog, agentId: string, clientId: string) =>
      (await log.readBefore(agentId, clientId, undefined, 10)).messages.map((m) => m.text);

    it('past maxConversations the bot with the most conversations gives one up, not one with a few large ones', async () => {
      const log = new MemoryConversationLog({ maxMessages: 10, ttlS: 60 }, { maxConversations: 10, maxMessages: 1000 }, quota);
      await log.append('victim', 'v1', { ...msg('v'.repeat(50_000)), agentId: 'victim' });
      await log.append('victim', 'v2', { ...msg('v'.repeat(50_000)), agentId: 'victim' });
      for (let i = 0; i < 30; i++) await log.append('bot', `junk${i}`, msg(`junk ${i}`));
      expect(await texts(log, 'victim', 'v1')).toHaveLength(1);
      expect(await texts(log, 'victim', 'v2')).toHaveLength(1);
      expect(await texts(log, 'bot', 'junk29')).toEqual(['junk 29']);
      expect(await texts(log, 'bot', 'junk0')).toEqual([]);
    });

    it('past maxBytes the bot holding the most bytes gives up its least recently used conversation', async () => {
      const log = new MemoryConversationLog(
        { maxMessages: 10, ttlS: 60 },
        { maxConversations: 1000, maxMessages: 1000, maxBytes: 2 * 2 ** 20 },
        quota,
      );
      await log.append('victim', 'v1', { ...msg('v'.repeat(100_000)), agentId: 'victim' });
      for (let i = 0; i < 60; i++) await log.append('bot', `junk${i}`, msg('x'.repeat(60_000)));
      expect(log.byteSize).toBeLessThanOrEqual(2 * 2 ** 20);
      expect(await texts(log, 'victim', 'v1')).toHaveLength(1);
      expect(await texts(log, 'bot', 'junk59')).toHaveLength(1);
      expect(await texts(log, 'bot', 'junk0')).toEqual([]);
    });
  });

  it('drops the least recently used conversation past maxConversations', async () => {
    const log = new MemoryConversationLog({ maxMessages: 10, ttlS: 60 }, { maxConversations: 2, maxMessages: 100 });
    await log.append('bot', 'u1', msg('1'));
    await log.append('bot', 'u2', msg('2'));
    await log.readBefore('bot', 'u1', undefined, 10);
    await log.append('bot', 'u3', msg('3'));
    expect((await log.readBefore('bot', 'u1', undefined, 10)).messages).toHaveLength(1);
    expect((await log.readBefore('bot', 'u2', undefined, 10)).messages).toEqual([]);
  });

  it('drops least recently used conversations past maxMessages over all of them', async () => {
    const log = new MemoryConversationLog({ maxMessages: 4, ttlS: 60 }, { maxConversations: 100, maxMessages: 6 });
    for (let i = 0; i < 3; i++) await log.append('bot', 'old', msg(`o${i}`));
    for (let i = 0; i < 4; i++) await log.append('bot', 'new', msg(`n${i}`));
    expect((await log.readBefore('bot', 'old', undefined, 10)).messages).toEqual([]);
    expect((await log.readBefore('bot', 'new', undefined, 10)).messages).toHaveLength(4);
  });

  it('stops counting the messages of deleted and expired conversations against maxMessages', async () => {
    const log = new MemoryConversationLog({ maxMessages: 4, ttlS: 1 }, { maxConversations: 100, maxMessages: 6 });
    for (let i = 0; i < 4; i++) await log.append('bot', 'deleted', msg(`d${i}`));
    expect(await log.deleteConversation('bot', 'deleted')).toBe(true);
    expect(await log.deleteConversation('bot', 'deleted')).toBe(false);
    for (let i = 0; i < 4; i++) await log.append('bot', 'a', msg(`a${i}`));
    for (let i = 0; i < 2; i++) await log.append('bot', 'b', msg(`b${i}`));
    // Had the deleted conversation's 4 still counted, 'a' would have been dropped for 'b'.
    expect((await log.readBefore('bot', 'a', undefined, 10)).messages).toHaveLength(4);
    expect((await log.readBefore('bot', 'b', undefined, 10)).messages).toHaveLength(2);
  });

  it('drops an expired conversation on access and counts it as gone', async () => {
    const log = new MemoryConversationLog({ maxMessages: 4, ttlS: 1 }, { maxConversations: 100, maxMessages: 6 });
    const first = msg('old');
    await log.append('bot', 'u1', first);
    await sleep(1100);
    expect(await log.deleteConversation('bot', 'u1')).toBe(false);
    expect(await log.deleteUser('u1')).toBe(0);
    // A new log under the same key starts empty: the expired id is unknown.
    await log.append('bot', 'u1', msg('new'));
    expect(await log.readAfter('bot', 'u1', first.id, 10)).toEqual({ ok: false, reason: 'unknown' });
    expect((await log.readBefore('bot', 'u1', undefined, 10)).messages.map((m) => m.text)).toEqual(['new']);
  });

  it('expires a conversation ttlS after its last append', async () => {
    const log = new MemoryConversationLog({ maxMessages: 10, ttlS: 1 }, { maxConversations: 10, maxMessages: 100 });
    await log.append('bot', 'u1', msg('1'));
    await sleep(1100);
    expect((await log.readBefore('bot', 'u1', undefined, 10)).messages).toEqual([]);
  });

  it('restarts the TTL on every append, a full log included', async () => {
    const log = new MemoryConversationLog({ maxMessages: 2, ttlS: 1 }, { maxConversations: 10, maxMessages: 100 });
    for (const id of ['1', '2', '3']) await log.append('bot', 'u1', msg(id));
    await sleep(600);
    await log.append('bot', 'u1', msg('4'));
    await sleep(600);
    // 1.2 s after the log filled up, 0.6 s after its last append.
    expect((await log.readBefore('bot', 'u1', undefined, 10)).messages.map((m) => m.text)).toEqual(['3', '4']);
  });

  describe('maxBytes', () => {
    const big = (kb: number) => 'x'.repeat(kb * 1024);

    it('keeps the bytes of all rings within maxBytes, dropping whole conversations least recently used first', async () => {
      const maxBytes = 2 * 1024 * 1024;
      const log = new MemoryConversationLog({ maxMessages: 10, ttlS: 60 }, { maxConversations: 10_000, maxMessages: 200_000, maxBytes });
      // 3,000 × 60 KB: what once held 340 MiB after the sockets closed.
      for (let i = 0; i < 3000; i++) {
        await log.append('bot', `u${i}`, msg(big(60)));
        expect(log.byteSize).toBeLessThanOrEqual(maxBytes);
      }
      // The newest conversations are whole, the oldest gone entirely.
      expect((await log.readBefore('bot', 'u2999', undefined, 10)).messages).toHaveLength(1);
      expect((await log.readBefore('bot', 'u2998', undefined, 10)).messages).toHaveLength(1);
      expect((await log.readBefore('bot', 'u0', undefined, 10)).messages).toEqual([]);
    });

    it('drops the least recently used, not the oldest written: a read keeps a conversation', async () => {
      const log = new MemoryConversationLog(
        { maxMessages: 10, ttlS: 60 },
        { maxConversations: 100, maxMessages: 1000, maxBytes: 600 * 1024 },
      );
      await log.append('bot', 'kept', msg(big(60)));
      for (let i = 0; i < 10; i++) {
        await log.append('bot', `u${i}`, msg(big(60)));
        await log.readBefore('bot', 'kept', undefined, 1);
      }
      expect(log.byteSize).toBeLessThanOrEqual(600 * 1024);
      expect((await log.readBefore('bot', 'kept', undefined, 10)).messages).toHaveLength(1);
      expect((await log.readBefore('bot', 'u0', undefined, 10)).messages).toEqual([]);
    });

    it('keeps the conversation just appended to whole even when it alone is larger than maxBytes', async () => {
      const log = new MemoryConversationLog(
        { maxMessages: 5, ttlS: 60 },
        { maxConversations: 100, maxMessages: 1000, maxBytes: 64 * 1024 },
      );
      await log.append('bot', 'other', msg('small'));
      const sent = [];
      for (let i = 0; i < 5; i++) {
        sent.push(msg(`${i}${big(30)}`));
        await log.append('bot', 'huge', sent[i]);
      }
      expect((await log.readBefore('bot', 'huge', undefined, 10)).messages).toEqual(sent);
      expect((await log.readBefore('bot', 'other', undefined, 10)).messages).toEqual([]);
    });

    it('counts the finals of streamed messages, kept beside the entries, in the bound', async () => {
      const maxBytes = 1024 * 1024;
      const log = new MemoryConversationLog({ maxMessages: 10, ttlS: 60 }, { maxConversations: 10_000, maxMessages: 200_000, maxBytes });
      // Each stream logs a start with text '' and, at its end, its whole text beside it.
      for (let i = 0; i < 100; i++) {
        const start = { ...msg(''), agentId: 'bot' };
        log.startStreamNow('bot', `u${i}`, start);
        log.endStreamNow('bot', `u${i}`, { ...start, text: big(60) });
        expect(log.byteSize).toBeLessThanOrEqual(maxBytes);
      }
      expect((await log.readBefore('bot', 'u99', undefined, 10)).messages.map((m) => m.text.length)).toEqual([60 * 1024]);
      expect((await log.readBefore('bot', 'u0', undefined, 10)).messages).toEqual([]);
    });

    it('counts the bytes of deleted and expired conversations as freed', async () => {
      const log = new MemoryConversationLog({ maxMessages: 4, ttlS: 1 }, { maxConversations: 100, maxMessages: 1000, maxBytes: 1 << 30 });
      await log.append('bot', 'a', msg(big(10)));
      await log.append('bot', 'b', msg(big(10)));
      const both = log.byteSize;
      expect(both).toBeGreaterThan(2 * 10 * 1024);
      expect(await log.deleteConversation('bot', 'a')).toBe(true);
      expect(log.byteSize).toBeLessThan(both);
      expect(await log.deleteUser('b')).toBe(1);
      expect(log.byteSize).toBe(0);
    });
  });
});
