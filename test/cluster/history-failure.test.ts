import { io as connect, type Socket } from 'socket.io-client';
import { Namespaces, type ClientInboundMessage, type SessionInfo } from '../../src/protocol';
import type { RelayAgent } from '../../src/sdk/agent';
import { startTestCluster, type TestCluster } from '../helpers/cluster';
import { sleep, waitFor } from '../helpers/wait';

// Losses docs/protocol.md ("Conversations and delivery guarantees") rules out: a replica dying with replies on their way to its clients, Redis gone.
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster({ RECOVERY_MAX_MESSAGES: '300' });
}, 60_000);

afterAll(async () => {
  await cluster?.close();
}, 30_000);

function open(url: string, sub: string, received: ClientInboundMessage[], lastMessageId?: string): Promise<Socket> {
  const socket = connect(`${url}${Namespaces.client}`, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    auth: { token: cluster.token({ sub }), agentId: 'bot', ...(lastMessageId ? { lastMessageId } : {}) },
  });
  socket.on('message', (m: ClientInboundMessage) => received.push(m));
  return new Promise((resolve, reject) => {
    socket.once('session', (s: SessionInfo) => (lastMessageId && !s.recovered ? reject(new Error('not recovered')) : resolve(socket)));
    socket.once('connect_error', reject);
  });
}

it('loses none of 200 replies when the replica holding their clients is SIGKILLed mid-stream (counted at the sockets)', async () => {
  const [A, B, C] = cluster.handle.replicas.map((r) => r.url);
  const agent: RelayAgent = await cluster.agent(A, 'bot');
  const users = Array.from({ length: 10 }, (_, i) => `victim-${i}`);
  const received = new Map<string, ClientInboundMessage[]>(users.map((u) => [u, []]));
  const sockets = await Promise.all(users.map((u) => open(C, u, received.get(u)!)));
  // Every user has seen one message before the stream starts, so each can name a lastMessageId.
  for (const u of users) await agent.reply(u, 'hello');
  await waitFor(() => users.every((u) => received.get(u)!.length === 1), 5000, 'greetings');

  const sent = new Map<string, string[]>(users.map((u) => [u, []]));
  const stream = (async () => {
    for (let i = 0; i < 20; i++) {
      const acks = await Promise.all(users.map((u) => agent.reply(u, `r${i}`)));
      users.forEach((u, k) => sent.get(u)!.push(acks[k].id));
      if (i === 6) void cluster.handle.replicas[2].kill('SIGKILL');
    }
  })();
  await stream;
  await waitFor(() => sockets.every((s) => !s.connected), 10_000, 'the victims to notice');

  // The victims' sockets missed replies (else this test would prove nothing); each client comes back
  // on another replica from the last id it actually received.
  for (const u of users) expect(received.get(u)!.length).toBeLessThan(21);
  await Promise.all(
    users.map((u) => {
      const got = received.get(u)!;
      return open(B, u, got, got[got.length - 1].id);
    }),
  );
  for (const u of users) {
    const last = sent.get(u)![19];
    await waitFor(() => received.get(u)!.some((m) => m.id === last), 10_000, `${u} caught up`);
  }
  let lost = 0;
  let doubled = 0;
  for (const u of users) {
    const got = received.get(u)!.map((m) => m.id);
    for (const id of sent.get(u)!) {
      const count = got.filter((g) => g === id).length;
      if (count === 0) lost++;
      if (count > 1) doubled++;
    }
    expect(got.slice(1)).toEqual(sent.get(u));
  }
  expect({ replies: users.length * 20, lost, doubled }).toEqual({ replies: 200, lost: 0, doubled: 0 });
}, 60_000);

it('answers a reply with SERVER_UNAVAILABLE while Redis is down, never ok, and delivers nothing', async () => {
  const [A] = cluster.handle.replicas.filter((r) => r.running).map((r) => r.url);
  const agent: RelayAgent = await cluster.agent(A, 'down-bot');
  const received: ClientInboundMessage[] = [];
  const socket = connect(`${A}${Namespaces.client}`, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    auth: { token: cluster.token({ sub: 'u' }), agentId: 'down-bot' },
  });
  socket.on('message', (m: ClientInboundMessage) => received.push(m));
  await new Promise((resolve) => socket.once('session', resolve));

  await cluster.handle.redis.kill('SIGKILL');
  const outcomes: string[] = [];
  for (let i = 0; i < 5; i++) {
    outcomes.push(
      await agent.reply('u', `during outage ${i}`).then(
        () => 'ok',
        (err: { code?: string }) => err.code ?? String(err),
      ),
    );
  }
  expect(outcomes).toEqual(Array(5).fill('SERVER_UNAVAILABLE'));
  await sleep(300);
  expect(received).toEqual([]);
  await cluster.handle.redis.start();
  socket.disconnect();
}, 60_000);
