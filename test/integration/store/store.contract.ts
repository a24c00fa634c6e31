import { createHash } from 'node:crypto';
import type { LoggedMessage } from '../../../src/store/conversation-log';
import { DuplicateError, type ApiKeyRecord, type Store, type UserRecord } from '../../../src/store/store';
import { waitFor } from '../../helpers/wait';

/**
 * The behaviour every Store implementation shares. Run it with a factory that returns an empty
 * store (memory.store.test.ts; redis.store.test.ts runs the same suite on a real Redis).
 *
 * @param makeStore returns a fresh, empty store for each test
 * @param cleanup releases a store after its test (default: `store.close()`)
 */
export function describeStoreContract(
  name: string,
  makeStore: () => Promise<Store>,
  cleanup: (store: Store) => Promise<void> = (store) => store.close(),
): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await cleanup(store);
    });

    describe('users', () => {
      const user = (id: string, email: string, minute: number, name = `Name ${id}`): UserRecord => {
        const at = new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString();
        return { id, email, name, phone: null, createdAt: at, updatedAt: at };
      };

      it('creates and gets a user; unknown ids are null', async () => {
        await store.users.create(user('u1', 'a@example.com', 1));
        expect(await store.users.get('u1')).toEqual(user('u1', 'a@example.com', 1));
        expect(await store.users.get('nobody')).toBeNull();
      });

      it('refuses a duplicate id with DuplicateError("id")', async () => {
        await store.users.create(user('u1', 'a@example.com', 1));
        const err = await store.users.create(user('u1', 'other@example.com', 2)).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(DuplicateError);
        expect((err as DuplicateError).field).toBe('id');
      });

      it('refuses a duplicate email case-insensitively with DuplicateError("email")', async () => {
        await store.users.create(user('u1', 'Alice@Example.com', 1));
        const err = await store.users.create(user('u2', 'alice@example.COM', 2)).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(DuplicateError);
        expect((err as DuplicateError).field).toBe('email');
        expect(await store.users.get('u2')).toBeNull();
      });

      it('lists oldest first with offset/limit and the total', async () => {
        for (let i = 1; i <= 5; i++) await store.users.create(user(`u${i}`, `u${i}@example.com`, i));
        const page = await store.users.list({ offset: 2, limit: 2 });
        expect(page.total).toBe(5);
        expect(page.items.map((u) => u.id)).toEqual(['u3', 'u4']);
        const last = await store.users.list({ offset: 4, limit: 2 });
        expect(last.items.map((u) => u.id)).toEqual(['u5']);
        expect((await store.users.list({ offset: 10, limit: 2 })).items).toEqual([]);
      });

      it('filters by exact email (case-insensitive) and by q over id, email and name', async () => {
        await store.users.create(user('alpha', 'one@example.com', 1, 'Ann Smith'));
        await store.users.create(user('beta', 'two@example.com', 2, 'Bob Jones'));
        await store.users.create(user('gamma', 'three@other.org', 3, 'Cy Smithers'));
        const byEmail = await store.users.list({ offset: 0, limit: 10, email: 'TWO@example.com' });
        expect(byEmail).toEqual({ items: [expect.objectContaining({ id: 'beta' })], total: 1 });
        expect((await store.users.list({ offset: 0, limit: 10, email: 'two@' })).total).toBe(0);
        const byName = await store.users.list({ offset: 0, limit: 10, q: 'smith' });
        expect(byName.items.map((u) => u.id)).toEqual(['alpha', 'gamma']);
        expect((await store.users.list({ offset: 0, limit: 10, q: 'OTHER.org' })).items.map((u) => u.id)).toEqual(['gamma']);
        expect((await store.users.list({ offset: 0, limit: 10, q: 'bet' })).items.map((u) => u.id)).toEqual(['beta']);
        const paged = await store.users.list({ offset: 1, limit: 1, q: 'smith' });
        expect(paged).toEqual({ items: [expect.objectContaining({ id: 'gamma' })], total: 2 });
      });

      it('updates fields, clears phone with null, bumps updatedAt, null for unknown ids', async () => {
        await store.users.create({ ...user('u1', 'a@example.com', 1), phone: '+1 555' });
        const updated = await store.users.update('u1', { name: 'New', phone: null });
        expect(updated).toMatchObject({ id: 'u1', email: 'a@example.com', name: 'New', phone: null });
        expect(updated!.updatedAt > updated!.createdAt).toBe(true);
        expect(await store.users.get('u1')).toEqual(updated);
        expect(await store.users.update('nobody', { name: 'x' })).toBeNull();
      });

      it('refuses an email taken by another user on update, allows re-casing your own', async () => {
        await store.users.create(user('u1', 'a@example.com', 1));
        await store.users.create(user('u2', 'b@example.com', 2));
        const err = await store.users.update('u2', { email: 'A@EXAMPLE.com' }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(DuplicateError);
        expect((err as DuplicateError).field).toBe('email');
        expect((await store.users.get('u2'))!.email).toBe('b@example.com');
        expect(await store.users.update('u1', { email: 'A@example.com' })).toMatchObject({ email: 'A@example.com' });
      });

      it('frees the email after an update and after a delete', async () => {
        await store.users.create(user('u1', 'a@example.com', 1));
        await store.users.update('u1', { email: 'new@example.com' });
        await store.users.create(user('u2', 'a@example.com', 2));
        expect(await store.users.delete('u2')).toMatchObject({ id: 'u2' });
        expect(await store.users.get('u2')).toBeNull();
        expect(await store.users.delete('u2')).toBeNull();
        await store.users.create(user('u3', 'a@example.com', 3));
        expect((await store.users.list({ offset: 0, limit: 10 })).total).toBe(2);
      });
    });

    describe('apiKeys', () => {
      const key = (id: string, secret: string, minute: number): ApiKeyRecord => ({
        id,
        name: `key ${id}`,
        scopes: ['embed:mint'],
        prefix: secret.slice(0, 6),
        hash: createHash('sha256').update(secret).digest('hex'),
        createdAt: new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString(),
        lastUsedAt: null,
      });

      it('creates, gets, lists oldest first and deletes keys', async () => {
        await store.apiKeys.create(key('k2', 'secret-two', 2));
        await store.apiKeys.create(key('k1', 'secret-one', 1));
        expect(await store.apiKeys.get('k1')).toEqual(key('k1', 'secret-one', 1));
        expect((await store.apiKeys.list()).map((k) => k.id)).toEqual(['k1', 'k2']);
        expect(await store.apiKeys.delete('k1')).toEqual(key('k1', 'secret-one', 1));
        expect(await store.apiKeys.get('k1')).toBeNull();
        expect(await store.apiKeys.delete('k1')).toBeNull();
        expect((await store.apiKeys.list()).map((k) => k.id)).toEqual(['k2']);
      });

      it('finds a key by hash only while it exists', async () => {
        const record = key('k1', 'secret-one', 1);
        await store.apiKeys.create(record);
        expect(await store.apiKeys.findByHash(record.hash)).toMatchObject({ id: 'k1' });
        expect(await store.apiKeys.findByHash('0'.repeat(64))).toBeNull();
        await store.apiKeys.delete('k1');
        expect(await store.apiKeys.findByHash(record.hash)).toBeNull();
      });

      it('records lastUsedAt with touch', async () => {
        await store.apiKeys.create(key('k1', 'secret-one', 1));
        await store.apiKeys.touch('k1', '2025-02-01T00:00:00.000Z');
        expect((await store.apiKeys.get('k1'))!.lastUsedAt).toBe('2025-02-01T00:00:00.000Z');
        await expect(store.apiKeys.touch('nobody', '2025-02-01T00:00:00.000Z')).resolves.toBeUndefined();
        expect(await store.apiKeys.get('nobody')).toBeNull();
      });
    });

    describe('deactivations', () => {
      it('deactivates and activates a subject, idempotently', async () => {
        expect(await store.deactivations.isDeactivated('u1')).toBe(false);
        await store.deactivations.deactivate('u1');
        await store.deactivations.deactivate('u1');
        expect(await store.deactivations.isDeactivated('u1')).toBe(true);
        expect(await store.deactivations.isDeactivated('u2')).toBe(false);
        await store.deactivations.activate('u1');
        expect(await store.deactivations.isDeactivated('u1')).toBe(false);
        await expect(store.deactivations.activate('never')).resolves.toBeUndefined();
      });

      it('answers which of many subjects are deactivated (batched past 1000)', async () => {
        const subs = Array.from({ length: 2500 }, (_, i) => `s${i}`);
        await Promise.all(['s3', 's1500', 's2499'].map((s) => store.deactivations.deactivate(s)));
        expect(await store.deactivations.deactivatedAmong(subs)).toEqual(new Set(['s3', 's1500', 's2499']));
        expect(await store.deactivations.deactivatedAmong([])).toEqual(new Set());
      });

      it('keeps a deactivation after the user record is deleted', async () => {
        const at = new Date().toISOString();
        await store.users.create({ id: 'u1', email: 'a@example.com', name: 'A', phone: null, createdAt: at, updatedAt: at });
        await store.deactivations.deactivate('u1');
        await store.users.delete('u1');
        expect(await store.deactivations.isDeactivated('u1')).toBe(true);
      });
    });

    describe('dedupe', () => {
      const record = { id: '0190f5c2-8a4b-7c3d-9e1f-123456789abc', ts: '2025-01-01T00:00:00.000Z', delivered: false };
      const k = { agentId: 'bot', sub: 'u1', clientMessageId: 'm1' };

      it('claims a key once and returns the stored record to later claims', async () => {
        expect(await store.dedupe.claim(k, record, 60)).toBeNull();
        expect(await store.dedupe.claim(k, { ...record, id: 'other' }, 60)).toEqual(record);
        expect(await store.dedupe.claim({ ...k, clientMessageId: 'm2' }, { ...record, id: 'other' }, 60)).toBeNull();
      });

      it('tells keys apart by every part, whatever characters they hold', async () => {
        expect(await store.dedupe.claim({ agentId: 'bot', sub: 'a:1', clientMessageId: '2' }, record, 60)).toBeNull();
        expect(await store.dedupe.claim({ agentId: 'bot', sub: 'a', clientMessageId: '1:2' }, record, 60)).toBeNull();
        expect(await store.dedupe.claim({ agentId: 'bot', sub: 'a\u0000b', clientMessageId: 'c' }, record, 60)).toBeNull();
        expect(await store.dedupe.claim({ agentId: 'bot', sub: 'a', clientMessageId: 'b\u0000c' }, record, 60)).toBeNull();
        expect(await store.dedupe.claim({ agentId: 'other', sub: 'a', clientMessageId: 'b\u0000c' }, record, 60)).toBeNull();
      });

      it('marks a record delivered, keeping id and ts', async () => {
        await store.dedupe.claim(k, record, 60);
        await store.dedupe.markDelivered(k, record, 60);
        expect(await store.dedupe.claim(k, { ...record, id: 'other' }, 60)).toEqual({ ...record, delivered: true });
      });

      it('forgets a record after its TTL', async () => {
        await store.dedupe.claim(k, record, 1);
        await waitFor(async () => (await store.dedupe.claim(k, { ...record, id: 'fresh' }, 1)) === null, 5000, 'the claim to expire');
      });
    });

    describe('intake (dedupe claim, runtimes, log append in one step)', () => {
      const runtime = { socketId: 'rt-1', replicaId: 'replica-a' };
      const k = { agentId: 'bot', sub: 'u1', clientMessageId: 'm1' };
      const record = (id: string) => ({ id, ts: '2025-01-01T00:00:00.000Z', delivered: false });
      const message = (id: string): LoggedMessage => ({
        id,
        ts: '2025-01-01T00:00:00.000Z',
        agentId: 'bot',
        author: 'user',
        text: `text ${id}`,
        clientMessageId: 'm1',
      });
      const admit = (id: string, log = true) =>
        store.intake.admit({
          key: k,
          record: record(id),
          ttlS: 60,
          clientId: 'c1',
          message: log ? message(id) : null,
          subscribersOf: null,
          handoff: null,
        });
      const logged = async () => (await store.log.readBefore('bot', 'c1', undefined, 10)).messages;

      it('claims, returns the live runtimes and logs a new message', async () => {
        await store.presence.addRuntime('bot', runtime);
        expect(await admit('id-1')).toEqual({
          existing: null,
          runtimes: [runtime],
          logged: true,
          subscribers: null,
          handedTo: null,
          control: 'bot',
        });
        expect(await logged()).toEqual([message('id-1')]);
        expect(await store.dedupe.claim(k, record('other'), 60)).toEqual(record('id-1'));
      });

      it("reads the conversation's control state in the same step (docs/handoff.md)", async () => {
        await store.presence.addRuntime('bot', runtime);
        const operator = { sub: 'ana', name: 'Ana' };
        const since = new Date().toISOString();
        expect((await store.control.compareAndSet('bot', 'c1', 0, { state: 'human', since, operator })).ok).toBe(true);
        expect(await admit('id-1')).toMatchObject({ logged: true, control: 'human' });
        expect(await store.log.readBefore('bot', 'c1', undefined, 10)).toMatchObject({ messages: [message('id-1')] });
      });

      it("refuses a bot's reply and a stream's open while an operator holds the conversation, writing nothing", async () => {
        const operator = { sub: 'ana', name: 'Ana' };
        const since = new Date().toISOString();
        const reply: LoggedMessage = { id: 'r-1', ts: '2025-01-01T00:00:00.000Z', agentId: 'bot', author: 'agent', text: 'hi' };
        expect(await store.log.appendReply('bot', 'c1', reply, null)).toEqual({ published: false, control: 'bot' });
        expect((await store.control.compareAndSet('bot', 'c1', 0, { state: 'human', since, operator })).ok).toBe(true);
        const held = { name: 'ConversationHeldError', record: expect.objectContaining({ state: 'human', operator }) };
        await expect(store.log.appendReply('bot', 'c1', { ...reply, id: 'r-2' }, null)).rejects.toMatchObject(held);
        const start = { ...reply, id: 's-1', text: '' };
        await expect(
          store.streams.open({ message: start, clientId: 'c1', owner: 'sock' }, { ttlMs: 60_000, maxBytes: 65_536 }, true),
        ).rejects.toMatchObject(held);
        expect(await store.streams.openOf('bot', 'c1')).toEqual([]);
        expect((await logged()).map((m) => m.id)).toEqual(['r-1']);
      });

      it('claims but logs nothing while the bot has no runtime (the caller waits, then appends)', async () => {
        expect(await admit('id-1')).toEqual({
          existing: null,
          runtimes: [],
          logged: false,
          subscribers: null,
          handedTo: null,
          control: 'bot',
        });
        expect(await logged()).toEqual([]);
        expect(await store.dedupe.claim(k, record('other'), 60)).toEqual(record('id-1'));
      });

      it('logs nothing when no message is given (the log is off)', async () => {
        await store.presence.addRuntime('bot', runtime);
        expect(await admit('id-1', false)).toEqual({
          existing: null,
          runtimes: [runtime],
          logged: false,
          subscribers: null,
          handedTo: null,
          control: 'bot',
        });
        expect(await logged()).toEqual([]);
      });

      it('returns an undelivered earlier record with the runtimes and logs nothing under the new id', async () => {
        await store.presence.addRuntime('bot', runtime);
        await admit('id-1');
        expect(await admit('id-2')).toEqual({
          existing: record('id-1'),
          runtimes: [runtime],
          logged: false,
          subscribers: null,
          handedTo: null,
          control: 'bot',
        });
        expect(await logged()).toEqual([message('id-1')]);
      });

      it('returns a delivered earlier record alone', async () => {
        await store.presence.addRuntime('bot', runtime);
        await admit('id-1');
        await store.dedupe.markDelivered(k, record('id-1'), 60);
        expect(await admit('id-2')).toEqual({
          existing: { ...record('id-1'), delivered: true },
          runtimes: [],
          logged: false,
          subscribers: null,
          handedTo: null,
          control: 'bot',
        });
      });

      it("spends the sender's budget first: past it nothing is claimed, read or logged, and other senders keep theirs", async () => {
        await store.presence.addRuntime('bot', runtime);
        const budget = { ratePerS: 1, burst: 3 };
        const send = (sub: string, clientMessageId: string, agentId = 'bot') =>
          store.intake.admit({
            key: { agentId, sub, clientMessageId },
            record: record(`${agentId}-${sub}-${clientMessageId}`),
            ttlS: 60,
            clientId: sub,
            message: { ...message(`${agentId}-${sub}-${clientMessageId}`), agentId, clientMessageId },
            subscribersOf: null,
            handoff: null,
            budget,
          });
        for (const id of ['a', 'b', 'c']) expect((await send('u1', id)).logged).toBe(true);
        expect(await send('u1', 'd')).toEqual({
          limited: true,
          existing: null,
          runtimes: [],
          logged: false,
          subscribers: null,
          handedTo: null,
          control: 'bot',
        });
        // Refused before the claim: the same clientMessageId is new once the budget allows it.
        expect(await store.dedupe.claim({ agentId: 'bot', sub: 'u1', clientMessageId: 'd' }, record('probe'), 60)).toBeNull();
        expect((await store.log.readBefore('bot', 'u1', undefined, 10)).messages.map((m) => m.id)).toEqual([
          'bot-u1-a',
          'bot-u1-b',
          'bot-u1-c',
        ]);
        // Per user and bot: another user, and the same user with another bot, have their own.
        expect((await send('u2', 'a')).limited).toBeUndefined();
        expect((await send('u1', 'a', 'other-bot')).limited).toBeUndefined();
        // One token back after a second at 1/s.
        await waitFor(async () => (await send('u1', 'e')).limited === undefined, 5000, 'the window to pass');
        expect((await send('u1', 'f')).limited).toBe(true);
      });

      it('reads the same record and log as the separate stores, so a message can be recovered after it', async () => {
        await store.presence.addRuntime('bot', runtime);
        await admit('id-1');
        await store.log.append('bot', 'c1', { ...message('id-2'), author: 'agent' });
        expect(await store.log.readAfter('bot', 'c1', 'id-1', 10)).toEqual({
          ok: true,
          messages: [{ ...message('id-2'), author: 'agent' }],
        });
      });
    });

    describe('limiters', () => {
      it('consumes atomically within a window and starts again after it', async () => {
        const limiter = store.limiters.create({ name: 'contract', points: 2, durationS: 1 });
        expect(await limiter.get('c')).toBeNull();
        const results = await Promise.allSettled([1, 2, 3, 4].map(() => limiter.consume('c')));
        expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
        const state = await limiter.get('c');
        expect(state?.consumedPoints).toBe(4);
        expect(state?.msBeforeNext).toBeGreaterThan(0);
        expect(state?.msBeforeNext).toBeLessThanOrEqual(1000);
        expect(await limiter.get('other')).toBeNull();
        await waitFor(async () => (await limiter.get('c')) === null, 5000, 'the entry to expire');
        expect((await limiter.consume('c')).consumedPoints).toBe(1);
      });
    });

    describe('presence', () => {
      const r1 = { socketId: 's1', replicaId: 'A' };
      const r2 = { socketId: 's2', replicaId: 'B' };

      it('counts runtimes per bot as they come and go', async () => {
        expect(await store.presence.addRuntime('bot', r1)).toBe(1);
        expect(await store.presence.addRuntime('bot', r2)).toBe(2);
        expect(await store.presence.addRuntime('bot', r2)).toBe(2);
        expect((await store.presence.listRuntimes('bot')).sort((a, b) => a.socketId.localeCompare(b.socketId))).toEqual([r1, r2]);
        expect(await store.presence.removeRuntime('bot', r1)).toBe(1);
        expect(await store.presence.removeRuntime('bot', r2)).toBe(0);
        expect(await store.presence.removeRuntime('bot', r2)).toBe(0);
        expect(await store.presence.listRuntimes('bot')).toEqual([]);
      });

      it('reports bots with runtimes or clients, sorted, and zeros for unknown bots', async () => {
        await store.presence.addRuntime('zeta', r1);
        await store.presence.addClient('alpha', { socketId: 'c1', replicaId: 'A' });
        await store.presence.addClient('alpha', { socketId: 'c2', replicaId: 'B' });
        await store.presence.addClient('zeta', { socketId: 'c3', replicaId: 'A' });
        expect(await store.presence.listAgents()).toEqual([
          { agentId: 'alpha', runtimes: 0, clients: 2 },
          { agentId: 'zeta', runtimes: 1, clients: 1 },
        ]);
        await store.presence.removeClient('alpha', { socketId: 'c1', replicaId: 'A' });
        await store.presence.removeClient('alpha', { socketId: 'c2', replicaId: 'B' });
        expect((await store.presence.listAgents()).map((a) => a.agentId)).toEqual(['zeta']);
        expect(await store.presence.getAgent('zeta')).toEqual({ agentId: 'zeta', runtimes: 1, clients: 1 });
        expect(await store.presence.getAgent('nobody')).toEqual({ agentId: 'nobody', runtimes: 0, clients: 0 });
      });
    });

    describe('approvals (docs/parts.md)', () => {
      const decision = (approved: boolean, decidedBy = 'u1') => ({ approved, decidedBy, ts: new Date().toISOString() });

      it('records the first decision only; a later one gets it back, another approval id is its own', async () => {
        const ref = { agentId: 'bot', messageId: 'm-1', approvalId: 'a1' };
        const yes = { ...decision(true), reason: 'fine' };
        expect(await store.approvals.decide(ref, yes, 60)).toEqual({ decision: yes, first: true, delivered: false });
        expect(await store.approvals.decide(ref, decision(false, 'u1'), 60)).toEqual({ decision: yes, first: false, delivered: false });
        const other = { ...ref, approvalId: 'a2' };
        const no = decision(false);
        expect(await store.approvals.decide(other, no, 60)).toEqual({ decision: no, first: true, delivered: false });
        expect(await store.approvals.decide({ ...ref, agentId: 'other-bot' }, no, 60)).toMatchObject({ first: true });
      });

      it('lets one call at a time claim a delivery, released or ended by the delivered mark', async () => {
        const ref = { agentId: 'bot', messageId: 'm-2', approvalId: 'a1' };
        await store.approvals.decide(ref, decision(true), 60);
        expect(await store.approvals.claimDelivery(ref, 5000)).toBe(true);
        expect(await store.approvals.claimDelivery(ref, 5000)).toBe(false);
        await store.approvals.releaseDelivery(ref);
        expect(await store.approvals.claimDelivery(ref, 5000)).toBe(true);
        await store.approvals.markDelivered(ref, 60);
        expect(await store.approvals.decide(ref, decision(true), 60)).toMatchObject({ first: false, delivered: true });
      });

      it('keeps decisions recorded with a delivery until marked delivered, per bot, oldest first; no claim once delivered', async () => {
        const ref = (messageId: string, agentId = 'bot-u') => ({ agentId, messageId, approvalId: 'a1' });
        const delivery = (messageId: string) => ({ id: 'a1', messageId, toolCallId: 'c', from: 'u1', approved: true, ts: 'now' });
        expect(await store.approvals.undelivered('bot-u', 10)).toEqual([]);
        await store.approvals.decide(ref('m-1'), decision(true), 60, delivery('m-1'));
        await store.approvals.decide(ref('m-2'), decision(true), 60, delivery('m-2'));
        // A repeat records nothing, a decision without a delivery is not kept, another bot's is its own.
        await store.approvals.decide(ref('m-1'), decision(false), 60, { ...delivery('m-1'), approved: false });
        await store.approvals.decide(ref('m-3'), decision(true), 60);
        await store.approvals.decide(ref('m-9', 'bot-v'), decision(true), 60, delivery('m-9'));
        expect(await store.approvals.undelivered('bot-u', 10)).toEqual([delivery('m-1'), delivery('m-2')]);
        expect(await store.approvals.undelivered('bot-u', 1)).toEqual([delivery('m-1')]);
        await store.approvals.markDelivered(ref('m-1'), 60);
        expect(await store.approvals.undelivered('bot-u', 10)).toEqual([delivery('m-2')]);
        expect(await store.approvals.claimDelivery(ref('m-1'), 5000)).toBe(false);
        expect(await store.approvals.undelivered('bot-v', 10)).toEqual([delivery('m-9')]);
      });

      it('drops an undelivered decision once its ttl passed', async () => {
        const ref = { agentId: 'bot-x', messageId: 'm-1', approvalId: 'a1' };
        await store.approvals.decide(ref, decision(true), 1, {
          id: 'a1',
          messageId: 'm-1',
          toolCallId: 'c',
          from: 'u1',
          approved: true,
          ts: 'now',
        });
        expect(await store.approvals.undelivered('bot-x', 10)).toHaveLength(1);
        await waitFor(
          async () => (await store.approvals.undelivered('bot-x', 10)).length === 0,
          5000,
          'the undelivered decision to expire',
        );
      });
    });
  });
}
