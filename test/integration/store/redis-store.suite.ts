import type { RedisClient } from '../../../src/store/redis/redis-client';
import type { AgentStatusChange } from '../../../src/store/redis/redis-presence.store';
import { RedisStore } from '../../../src/store/redis/redis.store';
import { RedisConversationLog } from '../../../src/store/redis/redis-conversation.store';
import { describeConversationLogContract } from './conversation-log.contract';
import { describeStreamStoreContract, textDelta } from './stream-store.contract';
import { describeStoreContract } from './store.contract';
import { describeQuotaContract } from './quota.contract';
import { describeControlStoreContract } from './control-store.contract';
import { sleep } from '../../helpers/wait';

/**
 * The store contract and the Redis store's own behaviour (concurrent claims, presence across
 * replicas, expiry, scripts) on one topology: every Lua script, transaction and multi-key command
 * of the stores runs here, so on a Redis Cluster a key outside its hash tag fails with CROSSSLOT.
 *
 * @param connect a new connection to the topology under test (called after the suite's beforeAll)
 */
export function describeRedisStore(name: string, connect: () => RedisClient): void {
  const clients: RedisClient[] = [];
  let n = 0;

  afterAll(() => {
    for (const c of clients) c.disconnect();
  });

  /** A store on its own key prefix, so tests never see each other's keys. */
  function makeStore(presenceTtlS = 30): RedisStore {
    const client = connect();
    clients.push(client);
    return new RedisStore(client, { prefix: `test${++n}:`, presenceTtlS });
  }

  /** Two replicas' views of the same state: same prefix, separate connections. */
  function twoReplicas(presenceTtlS = 30): [RedisStore, RedisStore] {
    const prefix = `shared${++n}:`;
    return [0, 1].map(() => {
      const client = connect();
      clients.push(client);
      return new RedisStore(client, { prefix, presenceTtlS });
    }) as [RedisStore, RedisStore];
  }

  describeStoreContract(name, async () => makeStore());

  describeControlStoreContract(name, async () => {
    const [a, b] = twoReplicas();
    return [a.control, b.control];
  });

  describeConversationLogContract(name, async (limits) => {
    const client = connect();
    clients.push(client);
    return new RedisConversationLog(client, `log${++n}:`, limits);
  });

  describeStreamStoreContract(name, async (limits) => {
    const client = connect();
    clients.push(client);
    const store = new RedisStore(client, { prefix: `streams${++n}:`, history: limits });
    return { streams: store.streams, log: store.log };
  });

  describeQuotaContract(name, async (quota, history) => {
    const client = connect();
    clients.push(client);
    return new RedisStore(client, { prefix: `quota${++n}:`, history, quota });
  });

  describe(`RedisStore specifics: ${name}`, () => {
    it("keeps the quota ledger's total equal to the sum of its parts through appends, trims, streams, drops and erasures", async () => {
      const client = connect();
      clients.push(client);
      const quota = { maxBytes: 40_000, maxConversations: 4, maxOpenStreams: 3 };
      const store = new RedisStore(client, { prefix: `ledger${++n}:`, history: { maxMessages: 5, ttlS: 60 }, quota });
      const ledger = `ledger${n}:{bot}:quota:bytes`;
      let k = 0;
      const msg = (text: string) => ({
        id: `0190a000-0000-7000-8000-${String(++k).padStart(12, '0')}`,
        ts: 't',
        agentId: 'bot',
        author: 'agent' as const,
        text,
      });
      const consistent = async () => {
        const fields = await client.hgetall(ledger);
        const parts = Object.entries(fields).filter(([f]) => f !== '#');
        expect(Number(fields['#'] ?? 0)).toBe(parts.reduce((sum, [, v]) => sum + Number(v), 0));
        for (const [, v] of parts) expect(Number(v)).toBeGreaterThanOrEqual(0);
      };
      const bounds = { maxBytes: 100_000, ttlMs: 60_000 };
      for (let i = 0; i < 40; i++) await store.log.append('bot', `u${i % 7}`, msg('x'.repeat(100 + 97 * i)), true);
      await consistent();
      const start = msg('');
      await store.streams.open({ message: start, clientId: 'u1', owner: 's' }, bounds, true);
      const target = { agentId: 'bot', id: start.id, clientId: 'u1' };
      for (let i = 0; i < 8; i++) await store.streams.append(target, textDelta('y'.repeat(5_000)), bounds, null, null, i % 2 === 0);
      await consistent();
      await store.log.append('bot', null, msg('to everyone'), true).catch(() => {});
      await store.streams.end('bot', start.id, { status: 'complete' }, true);
      await consistent();
      await store.log.deleteConversation('bot', 'u1');
      await store.log.deleteUser('u2');
      await consistent();
      expect(await client.zcard(`ledger${n}:{bot}:quota:convs`)).toBeLessThanOrEqual(4);
    });

    it('claims a dedupe key exactly once under concurrent claims from several replicas', async () => {
      const [a, b] = twoReplicas();
      const records = Array.from({ length: 20 }, (_, i) => ({ id: `id-${i}`, ts: 't', delivered: false }));
      const key = { agentId: 'bot', sub: 'u1', clientMessageId: 'm1' };
      const results = await Promise.all(records.map((r, i) => (i % 2 ? a : b).dedupe.claim(key, r, 60)));
      const winners = results.filter((r) => r === null);
      expect(winners).toHaveLength(1);
      const winner = records[results.indexOf(null)];
      for (const r of results) if (r !== null) expect(r).toEqual(winner);
      await a.dedupe.markDelivered(key, winner, 60);
      expect(await b.dedupe.claim(key, records[0], 60)).toEqual({ ...winner, delivered: true });
    });

    it('admits a client message once under concurrent intakes from several replicas, logging it once', async () => {
      const [a, b] = twoReplicas();
      await a.presence.addRuntime('bot', { socketId: 'rt', replicaId: 'A' });
      const key = { agentId: 'bot', sub: 'u1', clientMessageId: 'm1' };
      const ids = Array.from({ length: 20 }, (_, i) => `id-${i}`);
      const results = await Promise.all(
        ids.map((id, i) =>
          (i % 2 ? a : b).intake.admit({
            key,
            record: { id, ts: 't', delivered: false },
            ttlS: 60,
            clientId: 'c1',
            message: { id, ts: 't', agentId: 'bot', author: 'user', text: id, clientMessageId: 'm1' },
            subscribersOf: null,
            handoff: null,
          }),
        ),
      );
      const winners = results.filter((r) => r.existing === null);
      expect(winners).toHaveLength(1);
      expect(winners[0].logged).toBe(true);
      const winner = ids[results.indexOf(winners[0])];
      for (const r of results) if (r.existing !== null) expect(r).toMatchObject({ existing: { id: winner }, logged: false });
      const page = await b.log.readBefore('bot', 'c1', undefined, 50);
      expect(page.messages.map((m) => m.id)).toEqual([winner]);
    });

    it('answers presence cluster-wide and counts per replica entry', async () => {
      const [a, b] = twoReplicas();
      expect(await a.presence.addRuntime('bot', { socketId: 's1', replicaId: 'A' })).toBe(1);
      expect(await b.presence.addRuntime('bot', { socketId: 's2', replicaId: 'B' })).toBe(2);
      await b.presence.addClient('bot', { socketId: 'c1', replicaId: 'B' });
      expect(await a.presence.getAgent('bot')).toEqual({ agentId: 'bot', runtimes: 2, clients: 1 });
      expect((await a.presence.listRuntimes('bot')).sort((x, y) => x.socketId.localeCompare(y.socketId))).toEqual([
        { socketId: 's1', replicaId: 'A' },
        { socketId: 's2', replicaId: 'B' },
      ]);
      expect(await b.presence.removeRuntime('bot', { socketId: 's1', replicaId: 'A' })).toBe(1);
      expect(await a.presence.listAgents()).toEqual([{ agentId: 'bot', runtimes: 1, clients: 1 }]);
    });

    it("expires a replica's entries unless refreshed", async () => {
      const [alive, dead] = twoReplicas(1);
      await alive.presence.addRuntime('bot', { socketId: 'live', replicaId: 'A' });
      await dead.presence.addRuntime('bot', { socketId: 'ghost', replicaId: 'B' });
      await dead.presence.addClient('other', { socketId: 'c', replicaId: 'B' });
      const deadline = Date.now() + 5000;
      let runtimes = await alive.presence.listRuntimes('bot');
      while (runtimes.length > 1 && Date.now() < deadline) {
        await alive.presence.refresh([{ agentId: 'bot', runtimes: [{ socketId: 'live', replicaId: 'A' }], clients: [] }]);
        await sleep(200);
        runtimes = await alive.presence.listRuntimes('bot');
      }
      expect(runtimes).toEqual([{ socketId: 'live', replicaId: 'A' }]);
      expect(await alive.presence.listAgents()).toEqual([{ agentId: 'bot', runtimes: 1, clients: 0 }]);
    });

    it('reports a bot whose last runtimes expired, and its return, to exactly one refreshing replica', async () => {
      const [b, c] = twoReplicas(1);
      // Replica A registers runtimes of two bots, then stops refreshing (dead, or cut off from Redis).
      const ghost = { socketId: 'ghost', replicaId: 'A' };
      await b.presence.addRuntime('bot', ghost);
      await b.presence.addRuntime('busy', { socketId: 'ghost2', replicaId: 'A' });
      await b.presence.addRuntime('busy', { socketId: 'alive', replicaId: 'B' });
      // B and C hold clients of both bots and keep refreshing; B also holds busy's live runtime.
      const liveOnB = [
        { agentId: 'bot', runtimes: [], clients: [{ socketId: 'cb', replicaId: 'B' }] },
        { agentId: 'busy', runtimes: [{ socketId: 'alive', replicaId: 'B' }], clients: [{ socketId: 'cb2', replicaId: 'B' }] },
      ];
      const liveOnC = [
        { agentId: 'bot', runtimes: [], clients: [{ socketId: 'cc', replicaId: 'C' }] },
        { agentId: 'busy', runtimes: [], clients: [{ socketId: 'cc2', replicaId: 'C' }] },
      ];
      const reported: AgentStatusChange[] = [];
      const refreshBoth = async () => {
        const [fromB, fromC] = await Promise.all([b.presence.refresh(liveOnB), c.presence.refresh(liveOnC)]);
        reported.push(...fromB, ...fromC);
      };
      // Until both of A's runtimes have expired: ghost2 was registered after ghost, so it may expire
      // a refresh later.
      const expired = async () => (await b.presence.getAgent('bot')).runtimes === 0 && (await b.presence.getAgent('busy')).runtimes === 1;
      const deadline = Date.now() + 5000;
      while (!(await expired()) && Date.now() < deadline) {
        await refreshBoth();
        await sleep(100);
      }
      await refreshBoth();
      expect(reported).toEqual([{ agentId: 'bot', online: false }]);
      expect(await b.presence.getAgent('busy')).toEqual({ agentId: 'busy', runtimes: 1, clients: 2 });

      // A comes back and re-registers its runtime: the bot is announced online, once.
      expect(await c.presence.refresh([{ agentId: 'bot', runtimes: [ghost], clients: [] }])).toEqual([{ agentId: 'bot', online: true }]);
      expect(await c.presence.refresh([{ agentId: 'bot', runtimes: [ghost], clients: [] }])).toEqual([]);
    });

    it('re-registers live entries after Redis lost them', async () => {
      const store = makeStore();
      await store.presence.refresh([
        { agentId: 'bot', runtimes: [{ socketId: 'r', replicaId: 'A' }], clients: [{ socketId: 'c', replicaId: 'A' }] },
      ]);
      expect(await store.presence.getAgent('bot')).toEqual({ agentId: 'bot', runtimes: 1, clients: 1 });
    });

    it('shares limiter counts between stores on one Redis (two replicas), under the key prefix', async () => {
      const [a, b] = twoReplicas();
      // Limiters do not queue while the connection is not ready (they fall back at once): wait for it.
      await Promise.all([a.deactivations.isDeactivated('x'), b.deactivations.isDeactivated('x')]);
      const fallbacks: unknown[] = [];
      const options = { name: 'shared', points: 3, durationS: 60, onFallback: (err: unknown) => fallbacks.push(err) };
      await a.limiters.create(options).consume('x');
      await b.limiters.create(options).consume('x');
      expect((await a.limiters.create(options).get('x'))?.consumedPoints).toBe(2);
      expect(await b.limiters.create(options).get('never')).toBeNull();
      expect(fallbacks).toEqual([]);
    });

    it('keeps user email uniqueness case-insensitively across updates and deletes', async () => {
      const store = makeStore();
      const at = new Date().toISOString();
      const user = { id: 'u1', email: 'Ann@Example.com', name: 'Ann', phone: '+1', createdAt: at, updatedAt: at };
      await store.users.create(user);
      await expect(store.users.create({ ...user, id: 'u2', email: 'ann@example.COM' })).rejects.toMatchObject({ field: 'email' });
      await expect(store.users.create({ ...user, email: 'other@example.com' })).rejects.toMatchObject({ field: 'id' });
      const updated = await store.users.update('u1', { email: 'new@example.com', phone: null });
      expect(updated).toMatchObject({ id: 'u1', email: 'new@example.com', name: 'Ann', phone: null });
      await store.users.create({ ...user, id: 'u2' });
      await expect(store.users.update('u1', { email: 'ANN@example.com' })).rejects.toMatchObject({ field: 'email' });
      expect((await store.users.list({ offset: 0, limit: 10 })).items.map((u) => u.id)).toEqual(['u1', 'u2']);
      expect((await store.users.list({ offset: 0, limit: 10, q: 'new@' })).items.map((u) => u.id)).toEqual(['u1']);
      expect(await store.users.delete('u1')).toMatchObject({ id: 'u1', email: 'new@example.com' });
      await store.users.create({ ...user, id: 'u3', email: 'new@example.com' });
      expect((await store.users.list({ offset: 0, limit: 10, email: 'NEW@example.com' })).items.map((u) => u.id)).toEqual(['u3']);
    });

    it('stores API keys by hash and tracks last use separately', async () => {
      const store = makeStore();
      const record = { id: 'k1', name: 'ci', scopes: ['embed:mint'], prefix: 'rk_ab', hash: 'h1', createdAt: 'c', lastUsedAt: null };
      await store.apiKeys.create(record);
      await store.apiKeys.touch('k1', '2025-01-01T00:00:00.000Z');
      await store.apiKeys.touch('nope', '2025-01-01T00:00:00.000Z');
      expect(await store.apiKeys.findByHash('h1')).toEqual({ ...record, lastUsedAt: '2025-01-01T00:00:00.000Z' });
      expect(await store.apiKeys.list()).toHaveLength(1);
      expect(await store.apiKeys.delete('k1')).toEqual({ ...record, lastUsedAt: '2025-01-01T00:00:00.000Z' });
      expect(await store.apiKeys.findByHash('h1')).toBeNull();
      expect(await store.apiKeys.get('nope')).toBeNull();
    });
  });
}
