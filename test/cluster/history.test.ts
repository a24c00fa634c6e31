import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { io as connect, type Socket } from 'socket.io-client';
import Redis from 'ioredis';
import {
  Namespaces,
  type AgentStatus,
  type ClientInboundMessage,
  type HistoryAck,
  type SendAck,
  type SessionInfo,
} from '../../src/protocol';
import { pickByRendezvous } from '../../src/relay/rendezvous';
import { RelayAgent } from '../../src/sdk/agent';
import { RedisStore } from '../../src/store/redis/redis.store';
import { collect, startTestCluster, type TestCluster } from '../helpers/cluster';
import { mintToken } from '../helpers/tokens';
import { sleep, waitFor } from '../helpers/wait';

// Conversation log, recovery and restart grace (docs/protocol.md) on three hub processes and one real Redis.
let cluster: TestCluster;
let A: string, B: string, C: string;

beforeAll(async () => {
  cluster = await startTestCluster({ RECOVERY_MAX_MESSAGES: '300', HISTORY_MAX_MESSAGES: '500' });
  [A, B, C] = cluster.handle.replicas.map((r) => r.url);
}, 60_000);

afterAll(async () => {
  await cluster?.close();
}, 30_000);

/** A raw client socket recording every event from its first packet, as counted at the socket. */
interface Peer {
  socket: Socket;
  events: { event: string; payload: unknown }[];
  messages(): ClientInboundMessage[];
  session: Promise<SessionInfo>;
}

const peers: Socket[] = [];
afterEach(() => {
  for (const s of peers.splice(0)) s.disconnect();
});

function open(url: string, agentId: string, sub: string, lastMessageId?: string): Promise<Peer> {
  const socket = connect(`${url}${Namespaces.client}`, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    auth: { token: cluster.token({ sub }), agentId, ...(lastMessageId === undefined ? {} : { lastMessageId }) },
  });
  peers.push(socket);
  const events: Peer['events'] = [];
  socket.onAny((event: string, payload: unknown) => events.push({ event, payload }));
  const session = new Promise<SessionInfo>((resolve, reject) => {
    socket.once('session', resolve);
    socket.once('connect_error', reject);
  });
  const peer: Peer = {
    socket,
    events,
    messages: () => events.filter((e) => e.event === 'message').map((e) => e.payload as ClientInboundMessage),
    session,
  };
  return session.then(() => peer);
}

async function arrival(peer: Peer, id: string, timeoutMs = 10_000): Promise<void> {
  await waitFor(() => peer.messages().some((m) => m.id === id), timeoutMs, `message ${id}`);
}

const ids = (messages: ClientInboundMessage[]) => messages.map((m) => m.id);

describe('recovery across replicas', () => {
  let agent: RelayAgent;
  beforeAll(async () => {
    agent = await cluster.agent(A, 'bot');
  });

  it('replays replies sent while the client was away on reconnect through another replica, in order, exactly once', async () => {
    const first = await open(A, 'bot', 'away');
    const seen = await agent.reply('away', 'seen');
    await arrival(first, seen.id);
    first.socket.disconnect();
    const missed: string[] = [];
    for (let i = 0; i < 30; i++) missed.push((await agent.reply('away', `missed ${i}`)).id);

    const back = await open(B, 'bot', 'away', seen.id);
    expect((await back.session).recovered).toBe(true);
    const beforeSession = back.events.slice(
      0,
      back.events.findIndex((e) => e.event === 'session'),
    );
    expect(beforeSession.map((e) => e.event)).toEqual(missed.map(() => 'message'));
    expect(ids(back.messages())).toEqual(missed);
    const live = await agent.reply('away', 'live');
    await arrival(back, live.id);
    expect(ids(back.messages())).toEqual([...missed, live.id]);
  });

  it('replays nothing with recovered: false for an unknown or a too old lastMessageId', async () => {
    const old = await agent.reply('forgetful', 'old');
    for (let i = 0; i < 301; i++) await agent.reply('forgetful', `r${i}`);
    for (const id of ['0190a000-0000-7000-8000-000000000000', old.id]) {
      const peer = await open(C, 'bot', 'forgetful', id);
      expect((await peer.session).recovered).toBe(false);
      const marker = await agent.reply('forgetful', 'marker');
      await arrival(peer, marker.id);
      expect(ids(peer.messages())).toEqual([marker.id]);
      peer.socket.disconnect();
    }
  }, 30_000);

  it('neither loses nor doubles nor reorders replies published during the replay (concurrent replies)', async () => {
    // Each reconnect asks from the newest acknowledged reply, and five more replies are published while
    // its handshake reads and replays the log. The replies are paced by the reconnects, not by time:
    // 40 × 5 stay within RECOVERY_MAX_MESSAGES (300) and HISTORY_MAX_MESSAGES (500) however slow the
    // handshakes are, so every reconnect must recover.
    const acks: string[] = [(await agent.reply('busy', 'start')).id];
    const reconnects: { peer: Promise<Peer>; from: string }[] = [];
    for (let i = 0; i < 40; i++) {
      const from = acks[acks.length - 1];
      reconnects.push({ peer: open(i % 2 ? B : C, 'bot', 'busy', from), from });
      const batch = await Promise.all([0, 1, 2, 3, 4].map((k) => agent.reply('busy', `p${i * 5 + k}`)));
      acks.push(...batch.map((a) => a.id));
    }
    const connected = await Promise.all(reconnects.map(async (r) => ({ peer: await r.peer, from: r.from })));
    for (let i = 0; i < 5; i++) acks.push((await agent.reply('busy', `tail${i}`)).id);
    const last = acks[acks.length - 1];
    for (const { peer, from } of connected) {
      expect((await peer.session).recovered).toBe(true);
      await arrival(peer, last);
      expect(ids(peer.messages())).toEqual(acks.slice(acks.indexOf(from) + 1));
    }
  }, 60_000);

  it('serves history pages from the shared log on any replica', async () => {
    for (let i = 0; i < 7; i++) await agent.reply('reader', `h${i}`);
    const peer = await open(C, 'bot', 'reader');
    const page = (before?: string) =>
      peer.socket.timeout(5000).emitWithAck('history', { limit: 3, ...(before ? { before } : {}) }) as Promise<HistoryAck>;
    const newest = (await page()) as { messages: ClientInboundMessage[]; hasMore: boolean };
    expect([newest.messages.map((m) => m.text), newest.hasMore]).toEqual([['h4', 'h5', 'h6'], true]);
    const older = (await page(newest.messages[0].id)) as { messages: ClientInboundMessage[]; hasMore: boolean };
    expect([older.messages.map((m) => m.text), older.hasMore]).toEqual([['h1', 'h2', 'h3'], true]);
    const oldest = (await page(older.messages[0].id)) as { messages: ClientInboundMessage[]; hasMore: boolean };
    expect([oldest.messages.map((m) => m.text), oldest.hasMore]).toEqual([['h0'], false]);
  });

  it("echoes an accepted message to the user's tabs on other replicas", async () => {
    agent.onMessage(() => {});
    const [tab1, tab2] = await Promise.all([open(A, 'bot', 'tabs'), open(B, 'bot', 'tabs')]);
    const ack = (await tab1.socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'x1', text: 'typed on A' })) as SendAck;
    expect(ack.ok).toBe(true);
    const { id } = ack as { id: string };
    await arrival(tab2, id);
    expect(tab2.messages()).toEqual([expect.objectContaining({ id, author: 'user', clientMessageId: 'x1', text: 'typed on A' })]);
    const marker = await agent.reply('tabs', 'marker');
    await arrival(tab1, marker.id);
    expect(ids(tab1.messages())).toEqual([marker.id]);
  });

  // Whether an echo went through Redis shows in the sender's replica's adapter counter: its own
  // subscription to the room's channel receives every publish to it. The bot (on A) publishes its
  // marker reply after any echo would have been published, and the marker reaches B's tabs only
  // through that subscription, so once it has arrived the count is final.
  async function adapterMessages(url: string): Promise<number> {
    const text = await (await fetch(`${url}/metrics`)).text();
    return Number(/relay_redis_pubsub_messages_received_total\{kind="adapter"\} (\d+)/.exec(text)?.[1] ?? 0);
  }

  it('publishes nothing through Redis for the message of a user with one tab', async () => {
    agent.onMessage(() => {});
    const only = await open(B, 'bot', 'single-tab');
    const before = await adapterMessages(B);
    const ack = (await only.socket.timeout(10_000).emitWithAck('message', { clientMessageId: 's1', text: 'alone' })) as SendAck;
    expect(ack.ok).toBe(true);
    const marker = await agent.reply('single-tab', 'marker');
    await arrival(only, marker.id);
    expect((await adapterMessages(B)) - before).toBe(1); // the marker only
    expect(ids(only.messages())).toEqual([marker.id]);
  });

  it('echoes to tabs on the same replica without going through Redis', async () => {
    agent.onMessage(() => {});
    const [tab1, tab2] = await Promise.all([open(B, 'bot', 'local-tabs'), open(B, 'bot', 'local-tabs')]);
    const before = await adapterMessages(B);
    const ack = (await tab1.socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'l1', text: 'typed on B' })) as SendAck;
    expect(ack.ok).toBe(true);
    const { id } = ack as { id: string };
    await arrival(tab2, id);
    const marker = await agent.reply('local-tabs', 'marker');
    await Promise.all([arrival(tab1, marker.id), arrival(tab2, marker.id)]);
    expect((await adapterMessages(B)) - before).toBe(1);
    expect(ids(tab1.messages())).toEqual([marker.id]);
    expect(ids(tab2.messages())).toEqual([id, marker.id]);
  });
});

describe('agent restart grace across replicas', () => {
  it('delivers a message sent during a restart to the runtime that comes back on another replica; no offline announced', async () => {
    const first = await cluster.agent(A, 'restarting');
    const user = await open(B, 'restarting', 'patient');
    const statuses = collect<AgentStatus>(user.socket, 'agent:status');
    first.close();
    await sleep(300);
    const ack = user.socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'r1', text: 'are you there?' }) as Promise<SendAck>;
    await sleep(400);
    // The held message reaches the runtime as soon as it connects: its handler is set first.
    const second = new RelayAgent({ url: C, apiKey: cluster.handle.secrets.AGENT_API_KEYS, agentId: 'restarting' });
    const got: string[] = [];
    second.onMessage((m) => void got.push(m.text));
    await second.connect();
    expect(await ack).toMatchObject({ ok: true });
    await waitFor(() => got.length === 1, 5000, 'the held message');
    expect(got).toEqual(['are you there?']);
    await sleep(1800); // past the grace (1.5 s)
    expect(statuses).toEqual([]);
    second.close();
  });

  it('echoes a message that waited for the runtime to a tab the user opened on another replica meanwhile', async () => {
    const first = await cluster.agent(A, 'returning');
    const tab1 = await open(B, 'returning', 'waiting-user');
    first.close();
    await sleep(300);
    const ack = tab1.socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'w1', text: 'still there?' }) as Promise<SendAck>;
    // Opened while the message waits: when it was taken in, the user had no tab on another replica.
    const tab2 = await open(C, 'returning', 'waiting-user');
    const second = new RelayAgent({ url: A, apiKey: cluster.handle.secrets.AGENT_API_KEYS, agentId: 'returning' });
    second.onMessage(() => {});
    await second.connect();
    const delivered = await ack;
    expect(delivered.ok).toBe(true);
    const { id } = delivered as { id: string };
    await arrival(tab2, id);
    expect(tab2.messages()).toEqual([expect.objectContaining({ id, author: 'user', text: 'still there?' })]);
    second.close();
  });

  it('answers AGENT_OFFLINE after the grace and announces offline on every replica', async () => {
    const agent = await cluster.agent(A, 'leaving');
    const [onB, onC] = await Promise.all([open(B, 'leaving', 'u1'), open(C, 'leaving', 'u2')]);
    const statuses = [collect<AgentStatus>(onB.socket, 'agent:status'), collect<AgentStatus>(onC.socket, 'agent:status')];
    agent.close();
    await sleep(300);
    const started = Date.now();
    const ack = (await onB.socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'l1', text: 'hello?' })) as SendAck;
    expect(ack).toMatchObject({ ok: false, error: { code: 'AGENT_OFFLINE' } });
    expect(Date.now() - started).toBeGreaterThan(800);
    await waitFor(() => statuses.every((s) => s.length === 1), 5000, 'offline on both replicas');
    expect(statuses).toEqual([[{ agentId: 'leaving', online: false }], [{ agentId: 'leaving', online: false }]]);
  });
});

describe('REST conversations on the shared log', () => {
  const admin = () => ({
    authorization: `Bearer ${mintToken({ sub: 'root', roles: ['ADMIN'] }, cluster.handle.secrets.ADMIN_JWT_SECRET)}`,
  });
  const messages = async (url: string, agentId: string, clientId: string) => {
    const res = await fetch(`${url}/agents/${agentId}/conversations/${clientId}/messages?perPage=100`, { headers: admin() });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: { text: string }[] }).data.map((m) => m.text);
  };

  it('reads and deletes a conversation from any replica; deleteUser erases it with every bot', async () => {
    const [one, two] = [await cluster.agent(A, 'rest-a'), await cluster.agent(B, 'rest-b')];
    await one.reply('erased', 'a1');
    await two.reply('erased', 'b1');
    await one.reply('kept', 'a2');
    expect(await messages(C, 'rest-a', 'erased')).toEqual(['a1']);

    const deleted = await fetch(`${B}/agents/rest-a/conversations/kept`, { method: 'DELETE', headers: admin() });
    expect(deleted.status).toBe(204);
    expect(await messages(C, 'rest-a', 'kept')).toEqual([]);

    const user = await fetch(`${C}/users/erased`, { method: 'DELETE', headers: admin() });
    expect(user.status).toBe(404); // no record, but its conversations go all the same
    expect(await messages(A, 'rest-a', 'erased')).toEqual([]);
    expect(await messages(A, 'rest-b', 'erased')).toEqual([]);
  });
});

describe('a message logged and sent on in one step (one Redis server)', () => {
  let agent: RelayAgent;
  let redis: Redis;
  beforeAll(async () => {
    agent = await cluster.agent(A, 'one-step-bot');
    redis = new Redis(cluster.handle.redis.url);
  });
  afterAll(() => redis.disconnect());

  /**
   * The commands Redis runs while `act` runs whose arguments hold `marker`, as MONITOR prints them.
   * Redis ran them before an ECHO sent once `act` is done, so they are all in once MONITOR shows it
   * (MONITOR's socket may still hold them when `act`'s last answer arrives by another way). MONITOR
   * is read through redis-cli: ioredis's monitor mode sometimes takes a monitor line for a reply
   * ("Command queue state error") when lines come with its OK.
   */
  async function commandsHolding(marker: string, act: () => Promise<void>): Promise<string[]> {
    const monitor = spawn('redis-cli', ['-u', cluster.handle.redis.url, 'monitor'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: string[] = [];
    const end = `end of ${marker}`;
    const output = createInterface({ input: monitor.stdout });
    let started!: () => void;
    const monitoring = new Promise<void>((resolve) => (started = resolve));
    const ended = new Promise<void>((resolve) => {
      output.on('line', (line) => {
        if (line === 'OK') return started();
        // 1795743682.876551 [0 127.0.0.1:46560] "evalsha" "12bf…" "2" …  (source `lua` inside a script)
        const parsed = /^\S+ \[\d+ ([^\]]+)\] (.*)$/.exec(line);
        if (!parsed) return;
        const args = [...parsed[2].matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
        if (args[0]?.toLowerCase() === 'echo' && args[1] === end) resolve();
        else if (args.some((a) => a.includes(marker))) lines.push(`${parsed[1] === 'lua' ? 'lua ' : ''}${args[0].toLowerCase()}`);
      });
    });
    try {
      await monitoring;
      await act();
      await redis.echo(end);
      await ended;
    } finally {
      output.close();
      monitor.kill();
    }
    return lines;
  }

  it('sends one command for the append and the publish to the replica holding the user', async () => {
    const user = await open(B, 'one-step-bot', 'one-step-user');
    // The first reply may load the script (EVALSHA, then EVAL).
    const warm = await agent.reply('one-step-user', 'warm-up');
    await arrival(user, warm.id);
    const marker = `one-step-${Date.now()}`;
    let id = '';
    const commands = await commandsHolding(marker, async () => {
      id = (await agent.reply('one-step-user', marker)).id;
      await arrival(user, id);
    });
    expect(commands.filter((c) => !c.startsWith('lua '))).toEqual(['evalsha']);
    expect(commands).toContain('lua xadd');
    expect(commands).toContain('lua spublish');
    expect(ids(user.messages())).toEqual([warm.id, id]);
  });

  it("sends one command for a client message's claim, append and hand-off to the runtime's replica", async () => {
    const received: string[] = [];
    agent.onMessage((m) => {
      received.push(m.text);
    });
    const user = await open(B, 'one-step-bot', 'handoff-user');
    // The first message may load the script (EVALSHA, then EVAL).
    const warm = (await user.socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'w', text: 'warm-up' })) as SendAck;
    expect(warm.ok).toBe(true);
    const marker = `handoff-${Date.now()}`;
    let ack: SendAck | undefined;
    const commands = await commandsHolding(marker, async () => {
      ack = (await user.socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'm', text: marker })) as SendAck;
    });
    expect(ack).toMatchObject({ ok: true });
    expect(commands.filter((c) => !c.startsWith('lua '))).toEqual(['evalsha']);
    expect(commands).toContain('lua xadd');
    expect(commands).toContain('lua spublish');
    expect(received).toEqual(['warm-up', marker]);
  });

  it("marks a handed-off message delivered just ahead of the runtime's ack; a retry is not delivered again", async () => {
    const received: string[] = [];
    agent.onMessage((m) => {
      received.push(m.id);
    });
    const user = await open(B, 'one-step-bot', 'marked-user');
    // The first message may load the scripts (EVALSHA, then EVAL).
    expect(await user.socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'w', text: 'warm-up' })).toMatchObject({ ok: true });
    const clientMessageId = `marked-${Date.now()}`;
    let first: SendAck | undefined;
    const commands = await commandsHolding(clientMessageId, async () => {
      first = (await user.socket.timeout(10_000).emitWithAck('message', { clientMessageId, text: 'once' })) as SendAck;
    });
    expect(first).toMatchObject({ ok: true });
    // The intake on B (its claim inside), then on A the delivered mark, sent with the ack's publish.
    expect(commands.filter((c) => !c.startsWith('lua '))).toEqual(['evalsha', 'set']);
    expect(commands.filter((c) => c === 'lua set')).toHaveLength(1);
    const retry = (await user.socket.timeout(10_000).emitWithAck('message', { clientMessageId, text: 'once' })) as SendAck;
    expect(retry).toEqual(first);
    expect(received.slice(1)).toEqual([(first as { id: string }).id]);
  });

  it("delivers to the next runtime when the handed-off one's replica is gone (its presence not yet expired)", async () => {
    const received: string[] = [];
    agent.onMessage((m) => {
      received.push(m.text);
    });
    const store = new RedisStore(redis, { prefix: 'relay:' });
    const [live] = await store.presence.listRuntimes('one-step-bot');
    // What a replica killed a moment ago leaves: its runtime in presence, nobody on its channel.
    const stale = { socketId: 'stale-runtime-socket', replicaId: 'replica-killed' };
    await store.presence.addRuntime('one-step-bot', stale);
    try {
      const sub = Array.from({ length: 100 }, (_, i) => `stale-user-${i}`).find(
        (candidate) => pickByRendezvous(candidate, [live, stale], (r) => r.socketId) === stale,
      )!;
      const user = await open(B, 'one-step-bot', sub);
      const ack = (await user.socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'g', text: 'to the next one' })) as SendAck;
      expect(ack).toMatchObject({ ok: true });
      expect(received).toEqual(['to the next one']);
    } finally {
      await store.presence.removeRuntime('one-step-bot', stale);
    }
  });

  it('publishes nothing when the append fails: the bot is told SERVER_UNAVAILABLE, no replica delivers it', async () => {
    const user = await open(B, 'one-step-bot', 'refused-user');
    const here = await open(A, 'one-step-bot', 'refused-user');
    // The conversation's stream under a value of another type: XADD fails inside the script.
    const stream = `relay:{one-step-bot}:log:refused-user`;
    await redis.set(stream, 'not a stream');
    try {
      await expect(agent.reply('refused-user', 'never delivered')).rejects.toMatchObject({ code: 'SERVER_UNAVAILABLE' });
    } finally {
      await redis.del(stream);
    }
    const after = await agent.reply('refused-user', 'after');
    await Promise.all([arrival(user, after.id), arrival(here, after.id)]);
    expect(user.messages().map((m) => m.text)).toEqual(['after']);
    expect(here.messages().map((m) => m.text)).toEqual(['after']);
  });
});
