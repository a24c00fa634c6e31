import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { legacyKeyRenames, migrateLegacyKeys } from '../../../src/store/redis/legacy-keys';
import { RedisStore } from '../../../src/store/redis/redis.store';
import { startRedis, type TestRedis } from '../../helpers/redis-server';
import { RedisConversationLog } from '../../../src/store/redis/redis-conversation.store';
import { describeRedisStore } from './redis-store.suite';
import { pickByRendezvous, rendezvousSeed } from '../../../src/relay/rendezvous';
import { luaSource } from '../../../src/store/redis/lua-script';
import { waitFor } from '../../helpers/wait';
import { v7 } from 'uuid';
import type { LoggedMessage } from '../../../src/store/conversation-log';

let redis: TestRedis;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.close();
});

describeRedisStore('redis', () => new Redis(redis.url, { maxRetriesPerRequest: 1 }));

describe('keys of the first release', () => {
  it('are renamed to their hash-tagged names at start, keeping users and API keys', async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      const prefix = 'legacy:';
      const at = '2025-01-01T00:00:00.000Z';
      const user = { id: 'u1', email: 'a@example.com', name: 'A', phone: null, createdAt: at, updatedAt: at };
      // As the first release wrote them.
      await client.hset(`${prefix}users`, 'u1', JSON.stringify({ ...user, emailKey: 'a@example.com' }));
      await client.hset(`${prefix}users:email`, 'a@example.com', 'u1');
      await client.zadd(`${prefix}users:order`, 0, `${at}\nu1`);
      await client.hset(
        `${prefix}apikeys`,
        'k1',
        JSON.stringify({ id: 'k1', name: 'ci', scopes: [], prefix: 'rk', hash: 'h1', createdAt: at }),
      );
      await client.hset(`${prefix}apikeys:hash`, 'h1', 'k1');

      expect(await migrateLegacyKeys(client, prefix)).toEqual([
        `${prefix}users`,
        `${prefix}users:email`,
        `${prefix}users:order`,
        `${prefix}apikeys`,
        `${prefix}apikeys:hash`,
      ]);
      const store = new RedisStore(client, { prefix });
      expect(await store.users.get('u1')).toEqual(user);
      expect((await store.users.list({ offset: 0, limit: 10 })).total).toBe(1);
      await expect(store.users.create({ ...user, id: 'u2' })).rejects.toMatchObject({ field: 'email' });
      expect(await store.apiKeys.findByHash('h1')).toMatchObject({ id: 'k1', lastUsedAt: null });
      // Idempotent, and never overwrites a newer key.
      await client.hset(`${prefix}users`, 'stale', '{}');
      expect(await migrateLegacyKeys(client, prefix)).toEqual([]);
      expect(await store.users.get('u1')).toEqual(user);
      for (const [from] of legacyKeyRenames(prefix).slice(1)) expect(await client.exists(from)).toBe(0);
    } finally {
      client.disconnect();
    }
  });
});

describe('RedisMessageIntake on one server', () => {
  it("counts the subscribers of the sender's room channel in the same script", async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const subscribers = [0, 1].map(() => new Redis(redis.url, { maxRetriesPerRequest: 1 }));
    try {
      const store = new RedisStore(client, { prefix: 'tabs:' });
      await store.presence.addRuntime('bot', { socketId: 'rt', replicaId: 'A' });
      const admit = (clientMessageId: string) =>
        store.intake.admit({
          key: { agentId: 'bot', sub: 'u1', clientMessageId },
          record: { id: clientMessageId, ts: 't', delivered: false },
          ttlS: 60,
          clientId: 'c1',
          message: null,
          subscribersOf: 'tabs:room-channel#',
          handoff: null,
        });
      expect((await admit('m0')).subscribers).toBe(0);
      await subscribers[0].ssubscribe('tabs:room-channel#');
      expect((await admit('m1')).subscribers).toBe(1);
      await subscribers[1].ssubscribe('tabs:room-channel#', 'tabs:other#');
      expect((await admit('m2')).subscribers).toBe(2);
      // A retry of an undelivered message counts too (it is echoed once delivered); a delivered one does not.
      expect(await admit('m2')).toMatchObject({ existing: { id: 'm2' }, subscribers: 2 });
      await store.dedupe.markDelivered({ agentId: 'bot', sub: 'u1', clientMessageId: 'm2' }, { id: 'm2', ts: 't', delivered: false }, 60);
      expect((await admit('m2')).subscribers).toBeNull();
    } finally {
      client.disconnect();
      for (const s of subscribers) s.disconnect();
    }
  });
});

// The runtime is picked by one rule written twice: relay/rendezvous.ts where no script runs (memory,
// Redis Cluster, retries, waits) and lua/lib/rendezvous.lua inside the intake script, so the hand-off
// costs no extra round trip (docs/architecture.md, "Choosing the runtime"). One table, both picks.
describe('the rendezvous rule, in TypeScript and in Lua', () => {
  const ids = (n: number, prefix = '') => Array.from({ length: n }, (_, i) => `${prefix}${randomBytes(15).toString('base64url')}${i}`);
  const cases: { sub: string; socketIds: string[] }[] = [
    { sub: 'u1', socketIds: ['only'] },
    { sub: 'u1', socketIds: ['a', 'b'] },
    { sub: '', socketIds: ['a', 'b', 'c'] },
    { sub: 'ünïcödé 用户 🙂', socketIds: ids(5) },
    { sub: 'a\u0000b', socketIds: ['x"y', 'back\\slash', '', '~!@#$%^&*()'] },
    ...Array.from({ length: 200 }, (_, i) => ({ sub: `user-${i}`, socketIds: ids(1 + (i % 9)) })),
  ];
  const lua = `${luaSource('lib/rendezvous')}
local members = {}
for i = 2, #ARGV do members[#members + 1] = ARGV[i] end
local index = pick(members, tonumber(ARGV[1]))
return index`;

  it('picks the same runtime for every case', async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      const disagreements: unknown[] = [];
      for (const { sub, socketIds } of cases) {
        const runtimes = socketIds.map((socketId, i) => ({ replicaId: `R${i % 3}`, socketId }));
        const members = runtimes.map((r) => JSON.stringify([r.replicaId, r.socketId]));
        const index = (await client.eval(lua, 0, rendezvousSeed(sub), ...members)) as number;
        const ts = pickByRendezvous(sub, runtimes, (r) => r.socketId)!;
        if (runtimes[index - 1] !== ts) disagreements.push({ sub, socketIds, lua: runtimes[index - 1]?.socketId, ts: ts.socketId });
      }
      expect(disagreements).toEqual([]);
    } finally {
      client.disconnect();
    }
  });
});

describe('RedisMessageIntake handing a message off to its runtime on another replica', () => {
  const channel = { before: 'handoff:dispatch#', after: '#' };
  /** The JSON a replica's dispatcher would publish, the socket id filled in by the script. */
  const request = { before: '{"t":"req","id":"r1","socketId":', after: '}', at: 0, observed: '' };
  const admit = (store: RedisStore, sub: string, clientMessageId: string, replicaId = 'self') =>
    store.intake.admit({
      key: { agentId: 'bot', sub, clientMessageId },
      record: { id: clientMessageId, ts: 't', delivered: false },
      ttlS: 60,
      clientId: sub,
      message: { id: clientMessageId, ts: 't', agentId: 'bot', author: 'user', text: 'hi', clientMessageId },
      subscribersOf: null,
      handoff: { seed: rendezvousSeed(sub), replicaId, channel, request },
    });

  it("picks the runtime the relay's rendezvous hashing picks, for any sub, and publishes the request to its replica", async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const listener = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      const store = new RedisStore(client, { prefix: 'handoff:' });
      // Socket.IO ids: 20 characters of base64url; and one id JSON must escape.
      const runtimes = Array.from({ length: 7 }, (_, i) => ({ socketId: randomBytes(15).toString('base64url'), replicaId: `R${i % 3}` }));
      runtimes.push({ socketId: 'odd"socket\\id', replicaId: 'R1' });
      for (const runtime of runtimes) await store.presence.addRuntime('bot', runtime);
      const received: { channel: string; request: { socketId: string } }[] = [];
      listener.on('smessage', (channel: string, raw: string) => received.push({ channel, request: JSON.parse(raw) }));
      await listener.ssubscribe(...['R0', 'R1', 'R2'].map((r) => `${channel.before}${r}${channel.after}`));
      const subs = [...Array.from({ length: 300 }, (_, i) => `user-${i}`), 'ünïcödé', '用户', '🙂 emoji', 'a\u0000b', ''];
      const picked = new Set<string>();
      for (const [i, sub] of subs.entries()) {
        const expected = pickByRendezvous(sub, runtimes, (r) => r.socketId)!;
        picked.add(expected.socketId);
        const intake = await admit(store, sub, `m${i}`);
        expect({ sub, handedTo: intake.handedTo, picked: intake.picked }).toEqual({
          sub,
          handedTo: { runtime: expected, receivers: 1 },
          picked: expected,
        });
        expect(intake.logged).toBe(true);
      }
      await waitFor(() => received.length === subs.length, 5000, 'every request');
      subs.forEach((sub, i) => {
        const expected = pickByRendezvous(sub, runtimes, (r) => r.socketId)!;
        expect(received[i]).toEqual({
          channel: `${channel.before}${expected.replicaId}${channel.after}`,
          request: { t: 'req', id: 'r1', socketId: expected.socketId },
        });
      });
      expect(picked.size).toBe(runtimes.length);
    } finally {
      client.disconnect();
      listener.disconnect();
    }
  });

  it('marks the handed-off message observed, in the same step, while an operator holds the conversation (docs/handoff.md)', async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const listener = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      const store = new RedisStore(client, { prefix: 'handoff-observed:' });
      await store.presence.addRuntime('bot', { socketId: 'rt', replicaId: 'R9' });
      const received: unknown[] = [];
      listener.on('smessage', (_channel: string, raw: string) => received.push(JSON.parse(raw)));
      await listener.ssubscribe(`${channel.before}R9${channel.after}`);
      const message = { id: 'x', text: 'hi' };
      const after = `,"message":${JSON.stringify(message)}}`;
      const observing = { before: '{"t":"req","socketId":', after, at: ',"message":'.length + 1, observed: '"observed":true,' };
      const send = (clientMessageId: string) =>
        store.intake.admit({
          key: { agentId: 'bot', sub: 'u1', clientMessageId },
          record: { id: clientMessageId, ts: 't', delivered: false },
          ttlS: 60,
          clientId: 'u1',
          message: null,
          subscribersOf: null,
          handoff: { seed: rendezvousSeed('u1'), replicaId: 'self', channel, request: observing },
        });
      expect(await send('m1')).toMatchObject({ control: 'bot', handedTo: { receivers: 1 } });
      const since = new Date().toISOString();
      await store.control.compareAndSet('bot', 'u1', 0, { state: 'human', since, operator: { sub: 'ana', name: 'Ana' } });
      expect(await send('m2')).toMatchObject({ control: 'human', handedTo: { receivers: 1 } });
      await waitFor(() => received.length === 2, 5000, 'both requests');
      expect(received).toEqual([
        { t: 'req', socketId: 'rt', message },
        { t: 'req', socketId: 'rt', message: { observed: true, ...message } },
      ]);
    } finally {
      client.disconnect();
      listener.disconnect();
    }
  });

  it('leaves a retry and a bot without runtimes to the caller, names its pick on this replica instead of handing it off; 0 receivers for a gone replica', async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      const store = new RedisStore(client, { prefix: 'handoff-left:' });
      expect(await admit(store, 'u1', 'm1')).toMatchObject({ runtimes: [], handedTo: null, logged: false });
      const runtime = { socketId: 'rt', replicaId: 'elsewhere' };
      await store.presence.addRuntime('bot', runtime);
      expect(await admit(store, 'u1', 'm1')).toMatchObject({ existing: { id: 'm1' }, handedTo: null });
      // Nobody listens on that replica's channel: the caller hears 0 receivers (the replica is gone).
      expect(await admit(store, 'u1', 'm2')).toMatchObject({ existing: null, logged: true, handedTo: { runtime, receivers: 0 } });
      // Its own runtime: nothing published, and the script's pick is the relay's (one decision per message).
      const local = await admit(store, 'u1', 'm3', 'elsewhere');
      expect(local).toMatchObject({ existing: null, logged: true, handedTo: null, picked: runtime });
      // A bot's only runtime is taken without scoring, its member read whatever it holds.
      await store.presence.removeRuntime('bot', runtime);
      const odd = { socketId: 'only"one\\', replicaId: 'rep"lica' };
      await store.presence.addRuntime('bot', odd);
      expect(await admit(store, 'u1', 'm4')).toMatchObject({ existing: null, handedTo: { runtime: odd, receivers: 0 } });
    } finally {
      client.disconnect();
    }
  });
});

describe('RedisConversationLog lookups by id', () => {
  // The log keeps no index by message id: reads search from the newest entries in growing chunks.
  let client: Redis;
  beforeEach(() => {
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  });
  afterEach(() => client.disconnect());

  const agentMessage = (text: string): LoggedMessage => ({ id: v7(), ts: new Date().toISOString(), agentId: 'bot', author: 'agent', text });
  const texts = (messages: LoggedMessage[]) => messages.map((m) => m.text);

  it('finds ids deep in a conversation and in the broadcasts, across search chunks', async () => {
    const log = new RedisConversationLog(client, 'deep:', { maxMessages: 400, ttlS: 120 });
    const all: LoggedMessage[] = [];
    for (let i = 0; i < 300; i++) {
      const broadcast = i % 3 === 2;
      const message = agentMessage(`${broadcast ? 'all' : 'm'}${i}`);
      await log.append('bot', broadcast ? null : 'u1', message, true);
      all.push(message);
    }
    // 16 + 64 entries per stream are searched before the third chunk: these are in it, or beyond.
    for (const at of [0, 4, 5, 150, 298]) {
      expect(await log.readAfter('bot', 'u1', all[at].id, 400)).toEqual({ ok: true, messages: all.slice(at + 1) });
      const page = await log.readBefore('bot', 'u1', all[at].id, 5);
      expect([texts(page.messages), page.hasMore]).toEqual([texts(all.slice(Math.max(0, at - 5), at)), at > 5]);
    }
    expect(await log.readAfter('bot', 'u1', all[0].id, 298)).toEqual({ ok: false, reason: 'too-many' });
    expect(await log.readAfter('bot', 'u1', v7(), 400)).toEqual({ ok: false, reason: 'unknown' });
    // A retried append of the oldest message, not fresh, finds it and logs nothing.
    await log.append('bot', 'u1', all[0]);
    await log.append('bot', null, all[2]);
    expect(await log.readAfter('bot', 'u1', all[0].id, 400)).toEqual({ ok: true, messages: all.slice(1) });
  });

  it('keeps exactly the newest maxMessages while Redis drops whole stream nodes beneath them', async () => {
    const log = new RedisConversationLog(client, 'nodes:', { maxMessages: 30, ttlS: 120 });
    // Entries of about 200 bytes fill a 4 KB node (stream-node-max-bytes) every ~20: hundreds of
    // appends make Redis drop many old nodes, and the oldest node left holds entries past the 30.
    const all = Array.from({ length: 500 }, (_, i) => agentMessage(`m${i} ${'x'.repeat(120)}`));
    const shared = Array.from({ length: 50 }, (_, i) => agentMessage(`all ${i}`));
    const appended: LoggedMessage[] = [];
    for (let i = 0; i < all.length; i++) {
      await log.append('bot', 'u1', all[i], true);
      appended.push(all[i]);
      if (i % 10 === 9) {
        await log.append('bot', null, shared[(i - 9) / 10], true);
        appended.push(shared[(i - 9) / 10]);
      }
    }
    const stream = 'nodes:{bot}:log:u1';
    const length = await client.xlen(stream);
    expect(length).toBeGreaterThan(30);
    expect(length).toBeLessThan(130);
    // History: the newest 30 of each stream, merged; nothing older, however deep the pages go.
    const kept = [...all.slice(-30), ...shared.slice(-30)].map((m) => m.id);
    const seen: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await log.readBefore('bot', 'u1', before, 7);
      seen.unshift(...page.messages.map((m) => m.id));
      if (!page.hasMore) break;
      before = page.messages[0].id;
    }
    expect(seen.sort()).toEqual([...kept].sort());
    // Recovery: from the oldest kept entry, everything after it; from the one before, unknown
    // (still in Redis's node, no longer in the log).
    const oldest = all[all.length - 30];
    expect(await log.readAfter('bot', 'u1', oldest.id, 100)).toEqual({ ok: true, messages: appended.slice(appended.indexOf(oldest) + 1) });
    expect(await log.readAfter('bot', 'u1', all[all.length - 31].id, 100)).toEqual({ ok: false, reason: 'unknown' });
    expect(await log.readBefore('bot', 'u1', all[all.length - 31].id, 5)).toEqual({ messages: [], hasMore: false });
    // A retried append of an entry past the 30 logs it again, as it would after an exact trim.
    await log.append('bot', 'u1', all[all.length - 31]);
    expect((await log.readBefore('bot', 'u1', undefined, 1)).messages).toEqual([all[all.length - 31]]);
  });

  it("numbers entries after the bot's clock when it is ahead of Redis's time (a failover to a server whose clock is behind)", async () => {
    const log = new RedisConversationLog(client, 'ahead:', { maxMessages: 10, ttlS: 120 });
    const ahead = Date.now() + 3_600_000;
    await client.set('ahead:{bot}:clock', `${ahead}-5`);
    const [m1, all, m2] = [agentMessage('m1'), agentMessage('all'), agentMessage('m2')];
    await log.append('bot', 'u1', m1, true);
    await log.append('bot', null, all, true);
    await log.append('bot', 'u1', m2, true);
    expect((await client.xrange('ahead:{bot}:log:u1', '-', '+')).map(([sid]) => sid)).toEqual([`${ahead}-6`, `${ahead}-8`]);
    expect(await client.get('ahead:{bot}:clock')).toBe(`${ahead}-8`);
    expect(texts((await log.readBefore('bot', 'u1', undefined, 10)).messages)).toEqual(['m1', 'all', 'm2']);
  });

  it('searches on in chunks of 1,024 past the first few', async () => {
    const log = new RedisConversationLog(client, 'long:', { maxMessages: 5000, ttlS: 120 });
    const all = Array.from({ length: 2500 }, (_, i) => agentMessage(`m${i}`));
    // Issued together, they reach Redis in this order over the one connection.
    await Promise.all(all.map((message) => log.append('bot', 'u1', message, true)));
    // 16 + 64 + 256 + 1,024 entries from the newest come before the oldest ones' chunk.
    const after = await log.readAfter('bot', 'u1', all[10].id, 5000);
    expect(after.ok && texts(after.messages)).toEqual(texts(all.slice(11)));
    expect(await log.readBefore('bot', 'u1', all[2].id, 5)).toEqual({ messages: all.slice(0, 2), hasMore: false });
    expect(await log.readAfter('bot', 'u1', v7(), 5000)).toEqual({ ok: false, reason: 'unknown' });
  });
});

describe('RedisConversationLog layout', () => {
  it("keeps every key of a bot in the bot's hash slot and expires them after the last append", async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      const prefix = 'layout:';
      const log = new RedisConversationLog(client, prefix, { maxMessages: 10, ttlS: 120 });
      const message = {
        id: '0190a000-0000-7000-8000-000000000001',
        ts: new Date().toISOString(),
        agentId: 'bot-a',
        author: 'agent' as const,
        text: 'hi',
      };
      await log.append('bot-a', 'u{1}', message);
      await log.append('bot-a', null, { ...message, id: '0190a000-0000-7000-8000-000000000002' });
      const keys = (await client.keys(`${prefix}*`)).sort();
      expect(keys).toEqual(
        [
          `${prefix}{bot-a}:broadcasts`,
          `${prefix}{bot-a}:clock`,
          `${prefix}{bot-a}:log:u{1}`,
          `${prefix}{bot-a}:logindexed:u{1}`,
          `${prefix}{bot-a}:quota:bytes`,
          `${prefix}{bot-a}:quota:convs`,
          `${prefix}{user:u%7B1%7D}:conversations`,
        ].sort(),
      );
      // The user's index outlives the conversation, and the bot's quota ledger outlives what it counts
      // by two minutes; the marker says when the index is next refreshed.
      const lifetime = (key: string) =>
        key.endsWith(':conversations') || key.includes(':quota:') ? 240 : key.includes(':logindexed:') ? 60 : 120;
      for (const key of keys) {
        const ttl = await client.ttl(key);
        expect(ttl).toBeGreaterThan(lifetime(key) - 20);
        expect(ttl).toBeLessThanOrEqual(lifetime(key));
      }
      // Erasure takes the message-id index that replicas before this layout kept beside the stream too.
      await client.hset(`${prefix}{bot-a}:logidx:u{1}`, message.id, '1-0');
      expect(await log.deleteConversation('bot-a', 'u{1}')).toBe(true);
      // The broadcasts stay, and the quota ledger that counts them.
      expect((await client.keys(`${prefix}*`)).sort()).toEqual(
        [`${prefix}{bot-a}:broadcasts`, `${prefix}{bot-a}:clock`, `${prefix}{bot-a}:quota:bytes`, `${prefix}{bot-a}:quota:convs`].sort(),
      );
      expect((await client.hkeys(`${prefix}{bot-a}:quota:bytes`)).sort()).toEqual(['#', 'c:']);
      expect(await client.hexists(`${prefix}{bot-a}:quota:bytes`, 'c:u{1}')).toBe(0);
    } finally {
      client.disconnect();
    }
  });
});
