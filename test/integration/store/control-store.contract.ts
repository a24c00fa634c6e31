import type { ControlChange, ControlStore } from '../../../src/store/control-store';

/**
 * The behaviour every ControlStore shares (docs/handoff.md): run with a factory of empty stores
 * (memory.store.test.ts; redis-store.suite.ts on one Redis server and on a Redis Cluster).
 * `replicas` returns two views of one shared state where the backend has them (Redis), else the
 * same store twice.
 */
export function describeControlStoreContract(name: string, replicas: () => Promise<[ControlStore, ControlStore]>): void {
  describe(`ControlStore contract: ${name}`, () => {
    let a: ControlStore;
    let b: ControlStore;
    beforeEach(async () => {
      [a, b] = await replicas();
    });

    const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
    const waiting = (minute = 1): ControlChange => ({ state: 'waiting', since: at(minute), reason: 'refund', summary: 'wants money back' });
    const human = (sub: string, minute = 2): ControlChange => ({
      state: 'human',
      since: at(minute),
      reason: 'refund',
      operator: { sub, name: `Name ${sub}` },
      lastOperatorAt: at(minute),
    });
    const bot = (minute = 3): ControlChange => ({ state: 'bot', since: at(minute) });

    it('reads a conversation never handed off as bot, version 0', async () => {
      expect(await a.get('bot', 'u1')).toEqual({ agentId: 'bot', clientId: 'u1', state: 'bot', version: 0, since: null });
      expect(await a.listHandedOff('bot')).toEqual([]);
    });

    it('writes a change at the expected version and shows it on every replica', async () => {
      const set = await a.compareAndSet('bot', 'u1', 0, waiting());
      expect(set).toEqual({ ok: true, record: { agentId: 'bot', clientId: 'u1', version: 1, ...waiting() } });
      expect(await b.get('bot', 'u1')).toEqual({ agentId: 'bot', clientId: 'u1', version: 1, ...waiting() });
      expect(await b.listHandedOff('bot')).toEqual([{ agentId: 'bot', clientId: 'u1', version: 1, ...waiting() }]);
      expect(await b.listHandedOff('other')).toEqual([]);
    });

    it('refuses a change at a stale version, returning the current record and changing nothing', async () => {
      await a.compareAndSet('bot', 'u1', 0, waiting());
      await a.compareAndSet('bot', 'u1', 1, human('ana'));
      const stale = await b.compareAndSet('bot', 'u1', 1, human('ben'));
      expect(stale).toEqual({ ok: false, current: { agentId: 'bot', clientId: 'u1', version: 2, ...human('ana') } });
      expect(await a.get('bot', 'u1')).toEqual({ agentId: 'bot', clientId: 'u1', version: 2, ...human('ana') });
    });

    it('lets exactly one of many concurrent changes at one version win, across replicas', async () => {
      await a.compareAndSet('bot', 'u1', 0, waiting());
      const subs = Array.from({ length: 20 }, (_, i) => `op${i}`);
      const results = await Promise.all(subs.map((sub, i) => (i % 2 ? a : b).compareAndSet('bot', 'u1', 1, human(sub))));
      const winners = results.filter((r) => r.ok);
      expect(winners).toHaveLength(1);
      const holder = winners[0].ok ? winners[0].record.operator : undefined;
      for (const r of results) if (!r.ok) expect(r.current.operator).toEqual(holder);
      expect((await b.get('bot', 'u1')).operator).toEqual(holder);
    });

    it('keeps the version when handed back, so a compare-and-set read before stays stale', async () => {
      await a.compareAndSet('bot', 'u1', 0, waiting());
      await a.compareAndSet('bot', 'u1', 1, human('ana'));
      expect(await a.compareAndSet('bot', 'u1', 2, bot())).toMatchObject({ ok: true, record: { state: 'bot', version: 3 } });
      expect(await b.get('bot', 'u1')).toEqual({ agentId: 'bot', clientId: 'u1', version: 3, ...bot() });
      expect(await b.listHandedOff('bot')).toEqual([]);
      expect(await b.compareAndSet('bot', 'u1', 1, human('ben'))).toMatchObject({ ok: false, current: { state: 'bot', version: 3 } });
    });

    it('lists the bot’s handed-off conversations oldest change first, keeping clientIds apart', async () => {
      await a.compareAndSet('bot', 'u:2', 0, waiting(5));
      await a.compareAndSet('bot', 'u1', 0, waiting(1));
      await a.compareAndSet('bot', 'u', 0, waiting(3));
      expect((await b.listHandedOff('bot')).map((r) => r.clientId)).toEqual(['u1', 'u', 'u:2']);
    });

    it('finds held conversations idle since a time, and not those answered since', async () => {
      await a.compareAndSet('bot', 'u1', 0, human('ana', 1));
      await a.compareAndSet('bot', 'u2', 0, human('ana', 10));
      await a.compareAndSet('bot', 'u3', 0, waiting(1));
      expect(await b.idleSince(Date.parse(at(5)), 10)).toEqual([{ agentId: 'bot', clientId: 'u1' }]);
      await b.compareAndSet('bot', 'u1', 1, { ...human('ana', 1), lastOperatorAt: at(20) });
      expect(await a.idleSince(Date.parse(at(5)), 10)).toEqual([]);
      await b.compareAndSet('bot', 'u2', 1, bot(11));
      expect(await a.idleSince(Date.parse(at(30)), 10)).toEqual([{ agentId: 'bot', clientId: 'u1' }]);
      await a.dropIdle({ agentId: 'bot', clientId: 'u1' });
      // The sweep re-checks records: the index entry of a record still held may go, never the record.
      expect((await b.get('bot', 'u1')).state).toBe('human');
    });
  });
}
