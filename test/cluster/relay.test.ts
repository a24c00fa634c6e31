import type { Socket } from 'socket.io-client';
import type { Hub } from '../../src/hub/hub';
import type { RelayAgent } from '../../src/sdk/agent';
import { collect, startTestCluster, type TestCluster } from '../helpers/cluster';
import { waitFor } from '../helpers/wait';

// Three hub processes behind nginx on one redis-server; peers connect to chosen replicas directly.
let cluster: TestCluster;
let A: string, B: string, C: string;
let hub: Hub;

beforeAll(async () => {
  cluster = await startTestCluster();
  [A, B, C] = cluster.handle.replicas.map((r) => r.url);
  hub = await cluster.inProcessHub();
}, 60_000);

afterAll(async () => {
  await cluster?.close();
}, 30_000);

interface Inbound {
  id: string;
  text: string;
  replyTo?: string;
}

function send(socket: Socket, clientMessageId: string, text: string) {
  return socket.timeout(10_000).emitWithAck('message', { clientMessageId, text });
}

function next<T>(socket: Socket, event: string, where: (payload: T) => boolean = () => true): Promise<T> {
  return new Promise((resolve) => {
    const on = (payload: T) => {
      if (!where(payload)) return;
      socket.off(event, on);
      resolve(payload);
    };
    socket.on(event, on);
  });
}

describe('a fresh runtime', () => {
  it('is reachable from another replica the moment its connect() resolves', async () => {
    const failed: unknown[] = [];
    for (let i = 0; i < 30; i++) {
      const user = await cluster.socket(B, `fresh-${i}`, { sub: `u${i}` });
      const agent = await cluster.agent(A, `fresh-${i}`);
      agent.onMessage(() => {});
      const ack = await send(user, `fresh-m${i}`, 'first words');
      if (!ack.ok) failed.push(ack);
    }
    // Presence is written before the runtime's CONNECT leaves the hub, not after.
    expect(failed).toEqual([]);
  });
});

describe('cross-replica relay', () => {
  let agent: RelayAgent;
  let user: Socket, admin: Socket, other: Socket;

  beforeAll(async () => {
    agent = await cluster.agent(A, 'bot');
    agent.onMessage(async (m) => {
      await agent.debug({ step: 'received', text: m.text }, m.from);
      await agent.reply(m.from, `echo:${m.text}`, undefined, m.id);
    });
    user = await cluster.socket(B, 'bot', { sub: 'u1' });
    admin = await cluster.socket(C, 'bot', { sub: 'ops', roles: ['ADMIN'] });
    other = await cluster.socket(C, 'bot', { sub: 'u2' });
  });

  it('delivers a client message on B to the agent on A and the reply back to B', async () => {
    const reply = next<Inbound>(user, 'message');
    const ack = await send(user, 'm1', 'hello');
    expect(ack).toMatchObject({ ok: true });
    expect(await reply).toMatchObject({ text: 'echo:hello', replyTo: ack.id });
  });

  it('streams debug to admins on C only; a non-admin on C or the sender on B never see it', async () => {
    const userDebug = collect(user, 'debug');
    const otherDebug = collect(other, 'debug');
    const trace = next<{ clientId?: string; trace: { text: string } }>(admin, 'debug', (d) => d.trace.text === 'trace me');
    const echoed = next<Inbound>(user, 'message');
    await send(user, 'm2', 'trace me');
    await echoed;
    expect(await trace).toMatchObject({ clientId: 'u1', trace: { step: 'received', text: 'trace me' } });
    // A later unicast to u2 travels the same Redis connection after the trace, so once it is in,
    // any trace addressed to u2's replica would have arrived before it.
    const marker = next<Inbound>(other, 'message');
    await agent.reply('u2', 'marker');
    await marker;
    const userMarker = next<Inbound>(user, 'message', (m) => m.text === 'marker');
    await agent.reply('u1', 'marker');
    await userMarker;
    expect(userDebug).toEqual([]);
    expect(otherDebug).toEqual([]);
  });

  it("sends '*' to every client of the bot on every replica, and a unicast to one only", async () => {
    const all = [user, admin, other].map((s) => next<Inbound>(s, 'message', (m) => m.text === 'to everyone'));
    await agent.reply('*', 'to everyone');
    await Promise.all(all);
    const userGot = collect<Inbound>(user, 'message');
    const otherGot = next<Inbound>(other, 'message', (m) => m.text === 'only u2');
    await agent.reply('u2', 'only u2');
    await otherGot;
    const fence = next<Inbound>(user, 'message', (m) => m.text === 'fence');
    await agent.reply('u1', 'fence');
    await fence;
    expect(userGot.map((m) => m.text)).toEqual(['fence']);
  });

  it('answers presence cluster-wide from every replica', async () => {
    await waitFor(async () => (await hub.store.presence.getAgent('bot')).clients === 3, 5000, 'three clients in presence');
    expect(await hub.store.presence.getAgent('bot')).toEqual({ agentId: 'bot', runtimes: 1, clients: 3 });
    expect(await hub.store.presence.listRuntimes('bot')).toHaveLength(1);
  });

  it("deactivating a user on another replica ends that user's session on C and refuses new ones", async () => {
    const victim = await cluster.socket(C, 'bot', { sub: 'gone-user' });
    const closed = next<{ code: string; retryable: boolean }>(victim, 'session:closed');
    const disconnected = next<string>(victim, 'disconnect');
    await hub.relay.service.sessions.deactivateUser('gone-user');
    expect(await closed).toEqual({ code: 'USER_DEACTIVATED', retryable: false });
    expect(await disconnected).toBe('io server disconnect');
    await expect(cluster.socket(B, 'bot', { sub: 'gone-user' })).rejects.toMatchObject({ data: { code: 'USER_DEACTIVATED' } });
    expect(other.connected).toBe(true);
  });
});

describe('several runtimes of one bot', () => {
  it('keeps each client on one runtime and moves it when that runtime leaves', async () => {
    const runtimes = await Promise.all([A, B, C].map((url) => cluster.agent(url, 'multi')));
    const servedBy = new Map<string, Set<number>>();
    runtimes.forEach((runtime, index) =>
      runtime.onMessage((m) => {
        if (!servedBy.has(m.from)) servedBy.set(m.from, new Set());
        servedBy.get(m.from)!.add(index);
      }),
    );
    const subs = ['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7'];
    const sockets = await Promise.all(subs.map((sub, i) => cluster.socket([A, B, C][i % 3], 'multi', { sub })));
    for (let round = 0; round < 3; round++) {
      const acks = await Promise.all(sockets.map((s, i) => send(s, `r${round}`, `${subs[i]} round ${round}`)));
      for (const ack of acks) expect(ack).toMatchObject({ ok: true });
    }
    for (const sub of subs) expect(servedBy.get(sub)?.size).toBe(1);
    expect(new Set(subs.map((sub) => [...servedBy.get(sub)!][0])).size).toBeGreaterThan(1);

    const before = new Map(subs.map((sub) => [sub, [...servedBy.get(sub)!][0]]));
    const leaving = before.get('s0')!;
    runtimes[leaving].close();
    servedBy.clear();
    const acks = await Promise.all(sockets.map((s, i) => send(s, 'after', `${subs[i]} after`)));
    for (const ack of acks) expect(ack).toMatchObject({ ok: true });
    for (const sub of subs) {
      const now = [...servedBy.get(sub)!];
      expect(now).toHaveLength(1);
      if (before.get(sub) === leaving) expect(now[0]).not.toBe(leaving);
      else expect(now[0]).toBe(before.get(sub));
    }
  });
});

describe('a replica that stops answering', () => {
  it("fails the sender's message with TIMEOUT once the ack timeout and the hops have passed, and delivers again once it answers", async () => {
    const frozen = cluster.handle.replicas[0];
    const pid = frozen.pid!;
    const agent = await cluster.agent(frozen.url, 'frozen-bot');
    const received: string[] = [];
    agent.onMessage((m) => void received.push(m.text));
    const user = await cluster.socket(B, 'frozen-bot', { sub: 'frozen-user' });
    process.kill(pid, 'SIGSTOP');
    try {
      // Its subscription still takes the request: only the requesting replica's deadline can end the wait.
      const started = Date.now();
      const ack = (await send(user, 'f1', 'into the void')) as { ok: boolean; error?: { code: string } };
      expect(ack).toMatchObject({ ok: false, error: { code: 'TIMEOUT' } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(3000); // AGENT_ACK_TIMEOUT_MS of the cluster tests
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // Its late answer to that request finds nothing waiting; new messages go through.
    let n = 0;
    await waitFor(async () => ((await send(user, `f${++n + 1}`, 'back')) as { ok: boolean }).ok, 15_000, 'a delivery after SIGCONT');
    expect(received).toContain('back');
  }, 30_000);
});
