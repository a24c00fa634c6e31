import type { Socket } from 'socket.io-client';
import type { Hub } from '../../src/hub/hub';
import type { RelayAgent } from '../../src/sdk/agent';
import type { RelayChat } from '../../sdk/browser/src';
import { CLUSTER_TEST_ENV, connectionsOn, startTestCluster, type TestCluster } from '../helpers/cluster';
import { sleep, waitFor } from '../helpers/wait';

// Replicas die (SIGKILL) or drain (SIGTERM) while an agent and browser-SDK clients are connected
// through nginx; everyone must end up on the remaining replicas and chat again.
let cluster: TestCluster;
let hub: Hub;
let agent: RelayAgent;
const received = new Map<string, number>();

beforeAll(async () => {
  cluster = await startTestCluster();
  hub = await cluster.inProcessHub();
}, 60_000);

afterAll(async () => {
  await cluster?.close();
}, 30_000);

/** The replica (index) holding the agent, once the agent is connected through nginx. */
async function agentReplica(): Promise<number> {
  const counts = await Promise.all(
    cluster.handle.replicas.map((r) => (r.running ? connectionsOn(r.url) : Promise.resolve({ agents: 0, clients: 0 }))),
  );
  const index = counts.findIndex((c) => c.agents > 0);
  if (index < 0) throw new Error('agent not found on any replica');
  return index;
}

async function connectAgent(): Promise<void> {
  agent = await cluster.agent(cluster.url, 'bot');
  agent.onMessage(async (m) => {
    received.set(m.text, (received.get(m.text) ?? 0) + 1);
    await agent.reply(m.from, `echo:${m.text}`).catch(() => {});
  });
  // Presence is written before the handshake completes.
  expect((await hub.store.presence.getAgent('bot')).runtimes).toBe(1);
}

async function connectChats(prefix: string, count: number): Promise<RelayChat[]> {
  const chats: RelayChat[] = [];
  for (let i = 0; i < count; i++) chats.push(await cluster.chat(cluster.url, 'bot', { sub: `${prefix}${i}` }));
  return chats;
}

/**
 * Sends until a runtime takes it: right after a failover a client can be back before the agent,
 * and AGENT_OFFLINE is the retryable answer to that, as an integrator's UI would treat it.
 */
async function sendUntilDelivered(chat: RelayChat, text: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await chat.send(text);
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'AGENT_OFFLINE' || Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}

/** Every chat sends one message and gets both the ack and the agent's echo. */
async function everyoneChats(chats: RelayChat[], label: string): Promise<void> {
  await Promise.all(
    chats.map(async (chat, i) => {
      const text = `${label}-${i}`;
      const echo = new Promise<void>((resolve) => {
        const on = (m: { text: string }) => {
          if (m.text !== `echo:${text}`) return;
          chat.off('message', on);
          resolve();
        };
        chat.on('message', on);
      });
      await sendUntilDelivered(chat, text);
      await echo;
    }),
  );
}

it('SIGKILL of the replica holding the agent and clients: everyone reconnects through nginx, presence drops its entries', async () => {
  await connectAgent();
  const chats = await connectChats('c', 6);
  await everyoneChats(chats, 'before');
  const victimIndex = await agentReplica();
  const victim = cluster.handle.replicas[victimIndex];
  expect((await connectionsOn(victim.url)).clients).toBeGreaterThan(0);

  await victim.kill('SIGKILL');
  await waitFor(() => agent.connected && chats.every((c) => c.state === 'connected'), 10_000, 'everyone to reconnect');
  await everyoneChats(chats, 'after-kill');
  // The dead replica's runtime and client entries expire (PRESENCE_TTL_S = 3) and nothing else does.
  await waitFor(
    async () => {
      const p = await hub.store.presence.getAgent('bot');
      return p.runtimes === 1 && p.clients === 6;
    },
    Number(CLUSTER_TEST_ENV.PRESENCE_TTL_S) * 1000 + 5000,
    'presence to drop the dead replica',
  );
  await victim.start();
}, 60_000);

it('SIGTERM drains: transport close, reconnect elsewhere, in-flight sends acknowledged, exit 0 within the grace period', async () => {
  const chats = await connectChats('d', 6);
  // A replica with clients but not the agent: with a single runtime, the bot is necessarily offline
  // for the moment it takes to reconnect, which the SIGKILL case covers.
  const counts = await Promise.all(cluster.handle.replicas.map((r) => connectionsOn(r.url)));
  const draining = cluster.handle.replicas[counts.findIndex((c) => c.clients > 0 && c.agents === 0)];
  const raw: Socket = await cluster.socket(draining.url, 'bot', { sub: 'raw' });
  const rawDisconnect = new Promise<string>((resolve) => raw.once('disconnect', resolve));

  // Sends keep going while the replica drains; each must end acknowledged (after a reconnect and
  // a resend with the same clientMessageId where its transport was closed under it).
  const sends: Promise<unknown>[] = [];
  const texts: string[] = [];
  let n = 0;
  const sender = setInterval(
    () =>
      chats.forEach((chat, i) => {
        const text = `drain-${i}-${n++}`;
        texts.push(text);
        const sent = chat.send(text);
        sent.catch(() => {}); // judged below, all together
        sends.push(sent);
      }),
    100,
  );
  const startedAt = Date.now();
  const exit = draining.kill('SIGTERM');
  expect(await rawDisconnect).toBe('transport close');
  const status = await exit;
  const tookMs = Date.now() - startedAt;
  clearInterval(sender);

  expect(status).toEqual({ code: 0, signal: null });
  expect(tookMs).toBeLessThan(Number(CLUSTER_TEST_ENV.SHUTDOWN_GRACE_MS));
  const results = await Promise.allSettled(sends);
  expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
  expect(texts.length).toBeGreaterThan(0);
  expect(texts.filter((t) => received.get(t) !== 1)).toEqual([]); // each reached the agent once
  await waitFor(() => agent.connected && chats.every((c) => c.state === 'connected'), 10_000, 'everyone on the other replicas');
  await everyoneChats(chats, 'after-drain');
}, 60_000);

it("announces a bot offline once when its only runtime's replica dies", async () => {
  const [holder, other] = cluster.handle.replicas.filter((r) => r.running);
  const watcher: Socket = await cluster.socket(other.url, 'lonely', { sub: 'watcher' });
  const statuses: { online: boolean }[] = [];
  watcher.on('agent:status', (s: { online: boolean }) => statuses.push(s));
  await cluster.agent(holder.url, 'lonely');
  await waitFor(() => statuses.length === 1, 5000, 'the bot online');

  await holder.kill('SIGKILL');
  // Nobody removed the runtime: its entry expires (PRESENCE_TTL_S = 3) and the first refresh that
  // prunes it announces the bot offline, on every replica.
  await waitFor(() => statuses.length === 2, Number(CLUSTER_TEST_ENV.PRESENCE_TTL_S) * 2000 + 5000, 'the bot offline');
  await cluster.agent(other.url, 'lonely');
  await waitFor(() => statuses.length === 3, 5000, 'the bot online again');
  expect(statuses).toEqual([
    { agentId: 'lonely', online: true },
    { agentId: 'lonely', online: false },
    { agentId: 'lonely', online: true },
  ]);
}, 60_000);
