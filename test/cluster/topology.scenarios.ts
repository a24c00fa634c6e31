import type { Socket } from 'socket.io-client';
import type { ConfigKey } from '../../src/config/config';
import type { AgentInboundMessage, ClientInboundMessage, HandshakeErrorData } from '../../src/protocol';
import { clientSocket, nextEvent, refusal, startHub, type TestHub } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';
import { sleep, waitFor } from '../helpers/wait';

/** Hub settings of topology tests: short presence TTL and ack timeout, quiet logs. */
const HUB_ENV: Partial<Record<ConfigKey, string>> = {
  LOG_LEVEL: process.env.TOPOLOGY_LOG ?? 'silent',
  PRESENCE_TTL_S: '3',
  AGENT_ACK_TIMEOUT_MS: '3000',
};

export interface Topology {
  /** Hub settings that select it (REDIS_URL, REDIS_SENTINELS + NAME or REDIS_CLUSTER_NODES). */
  env: Record<string, string>;
  /** Kills the server holding `agentId`'s keys (the master), so a replica takes over. */
  killMaster(agentId: string): Promise<void>;
  /** Resolves when the topology has a master again for every key. */
  recovered(): Promise<void>;
}

/**
 * Relay behaviour every topology must keep (docs/deployment.md, "Redis topologies"): two replicas in this process on the
 * topology, a runtime on one and users on the other. The last test kills a master mid-traffic.
 */
export function describeTopology(name: string, topology: () => Topology): void {
  describe(`two replicas on ${name}`, () => {
    let a: TestHub, b: TestHub;
    const sockets: Socket[] = [];

    beforeAll(async () => {
      const env = { ...HUB_ENV, ...topology().env };
      [a, b] = await Promise.all([startHub(env), startHub(env)]);
      await Promise.all([a, b].map((h) => waitFor(() => ready(h), 15_000, `${h.url} ready`)));
    }, 30_000);

    afterAll(async () => {
      for (const s of sockets) s.disconnect();
      await Promise.all([a?.close(), b?.close()]);
    }, 30_000);

    const user = async (hub: TestHub, agentId: string, sub: string, roles?: string[]) => {
      const socket = await hub.client(agentId, { sub, ...(roles ? { roles } : {}) });
      sockets.push(socket);
      return socket;
    };
    const echo = async (hub: TestHub, agentId: string) => {
      const agent = await hub.agent(agentId);
      const seen: AgentInboundMessage[] = [];
      agent.onMessage((m: AgentInboundMessage) => {
        seen.push(m);
        return agent.reply(m.from, `echo: ${m.text}`).then(() => undefined);
      });
      return { agent, seen };
    };

    it('relays across replicas, both ways', async () => {
      await echo(a, 'relay-bot');
      const socket = await user(b, 'relay-bot', 'relay-user');
      const reply = nextEvent<ClientInboundMessage>(socket, 'message');
      expect(await socket.timeout(5000).emitWithAck('message', { clientMessageId: 'r1', text: 'hi' })).toMatchObject({ ok: true });
      expect((await reply).text).toBe('echo: hi');
    });

    it('broadcasts to every user of a bot on every replica, and keeps other users out', async () => {
      const { agent } = await echo(a, 'cast-bot');
      const [onA, onB] = [await user(a, 'cast-bot', 'cast-1'), await user(b, 'cast-bot', 'cast-2')];
      const outsider = await user(b, 'other-bot', 'cast-3');
      const strays: unknown[] = [];
      outsider.on('message', (m: unknown) => strays.push(m));
      const got = Promise.all([onA, onB].map((s) => nextEvent<ClientInboundMessage>(s, 'message')));
      await agent.reply('*', 'to everyone');
      expect((await got).map((m) => m.text)).toEqual(['to everyone', 'to everyone']);
      expect(strays).toEqual([]);
    });

    it('streams debug traces to admins on the other replica only', async () => {
      const { agent } = await echo(a, 'debug-bot');
      const admin = await user(b, 'debug-bot', 'debug-admin', ['ADMIN']);
      const plain = await user(b, 'debug-bot', 'debug-user');
      const leaked: unknown[] = [];
      plain.on('debug', (d: unknown) => leaked.push(d));
      const trace = nextEvent<{ trace: { step: string } }>(admin, 'debug');
      await agent.debug({ step: 'thinking' });
      expect((await trace).trace).toEqual({ step: 'thinking' });
      // The user's own message round trip proves the user's socket was live while the trace flowed.
      const reply = nextEvent<ClientInboundMessage>(plain, 'message');
      await plain.timeout(5000).emitWithAck('message', { clientMessageId: 'dbg', text: 'ping' });
      await reply;
      expect(leaked).toEqual([]);
    });

    it('dedupes a resent clientMessageId across replicas', async () => {
      const { seen } = await echo(a, 'dedupe-bot');
      const first = await user(b, 'dedupe-bot', 'dedupe-user');
      const ack1 = await first.timeout(5000).emitWithAck('message', { clientMessageId: 'same', text: 'once' });
      const again = await user(a, 'dedupe-bot', 'dedupe-user');
      const ack2 = await again.timeout(5000).emitWithAck('message', { clientMessageId: 'same', text: 'once' });
      expect(ack2).toEqual(ack1);
      await waitFor(() => seen.length >= 1, 5000, 'delivery');
      expect(seen.filter((m) => m.text === 'once')).toHaveLength(1);
    });

    it('shares presence: a runtime on one replica is seen from the other, and leaves', async () => {
      const { agent } = await echo(a, 'presence-bot');
      expect(await b.hub.store.presence.getAgent('presence-bot')).toMatchObject({ runtimes: 1 });
      expect((await b.hub.store.presence.listAgents()).map((p) => p.agentId)).toContain('presence-bot');
      agent.close();
      await waitFor(async () => (await b.hub.store.presence.getAgent('presence-bot')).runtimes === 0, 5000, 'runtime gone');
    });

    it('refuses a user deactivated through the other replica', async () => {
      await a.hub.store.deactivations.deactivate('gone-user');
      const data: HandshakeErrorData = await refusal(clientSocket(b.url, { token: mintToken({ sub: 'gone-user' }), agentId: 'any-bot' }));
      expect(data.code).toBe('USER_DEACTIVATED');
      await a.hub.store.deactivations.activate('gone-user');
    });

    it('counts handshake failures cluster-wide in shared limiters', async () => {
      const key = `topology-test-${Date.now()}`;
      const options = { name: 'topology', points: 10, durationS: 60 };
      await a.hub.store.limiters.create(options).consume(key);
      await b.hub.store.limiters.create(options).consume(key);
      expect((await a.hub.store.limiters.create(options).get(key))?.consumedPoints).toBe(2);
    });

    it('survives losing a master: no replica exits, readiness tells the truth, every ok-acked message arrives', async () => {
      const { seen } = await echo(a, 'failover-bot');
      const socket = await user(b, 'failover-bot', 'failover-user');
      // A replica whose subscription had a gap ends its sessions once it is back (what was published
      // in between passed it by, and it closes their transports); the user reconnects as the SDKs do,
      // and sends buffered meanwhile go then.
      const closedWith: string[] = [];
      socket.on('session:closed', (info: { code: string }) => closedWith.push(info.code));
      socket.on('disconnect', (reason: string) => reason !== 'io client disconnect' && void socket.connect());
      const acked: string[] = [];
      // When each message acked ok was sent. Messages go out every 60 ms whatever became of the
      // ones before (a command caught in the failover can take seconds to fail), so a gap between
      // these times is a stretch during which everything sent failed.
      const okSentAt: number[] = [];
      const failed: string[] = [];
      const readiness: boolean[] = [];
      let n = 0;
      let stop = false;
      const send = async (id: string, sentAt: number) => {
        try {
          const ack = (await socket.timeout(8000).emitWithAck('message', { clientMessageId: id, text: id })) as {
            ok: boolean;
            error?: { code: string };
          };
          if (ack.ok) {
            acked.push(id);
            okSentAt.push(sentAt);
          } else failed.push(`${id}:${ack.error?.code}`);
        } catch {
          failed.push(`${id}:no-ack`);
        }
      };
      const traffic = (async () => {
        const inFlight: Promise<void>[] = [];
        while (!stop) {
          inFlight.push(send(`f${++n}`, Date.now()));
          await sleep(60);
        }
        await Promise.all(inFlight);
      })();
      const probe = setInterval(() => void ready(b).then((r) => readiness.push(r)), 250);
      try {
        await waitFor(() => acked.length >= 5, 10_000, 'traffic before the failover');
        await topology().killMaster('failover-bot');
        await topology().recovered();
        const before = acked.length;
        await waitFor(() => acked.length >= before + 10, 30_000, 'relay resumed after the failover').catch((err: Error) => {
          throw new Error(`${err.message}; last failures: ${failed.slice(-5).join(', ')}; socket connected: ${socket.connected}`);
        });
        await waitFor(async () => (await ready(a)) && (await ready(b)), 20_000, 'both replicas ready again');
      } finally {
        stop = true;
        clearInterval(probe);
        await traffic;
      }
      // Every message acked ok reached the runtime (none lost in the failover).
      await waitFor(() => acked.every((id) => seen.some((m) => m.text === id)), 10_000, 'acked messages delivered');
      const delivered = new Set(seen.map((m) => m.text));
      expect(acked.filter((id) => !delivered.has(id))).toEqual([]);
      expect(closedWith.filter((code) => code !== 'SERVER_UNAVAILABLE')).toEqual([]);
      // Both hubs are still serving, and readiness ended true.
      expect([await ready(a), await ready(b)]).toEqual([true, true]);
      // Readiness tells the truth: when relay was out for longer than the canary's staleness (3 s)
      // plus a probe interval, readiness said so while it lasted. A faster failover may pass unseen.
      const sentAt = [...okSentAt].sort((x, y) => x - y);
      const outageMs = Math.max(...sentAt.slice(1).map((t, i) => t - sentAt[i]));
      if (outageMs > 3500) expect(readiness).toContain(false);
      process.stdout.write(
        `${name} failover: ${acked.length} acked ok, ${failed.length} refused or timed out, longest stretch of sends that all failed ${outageMs} ms, readiness samples false=${readiness.filter((r) => !r).length}/${readiness.length}\n`,
      );
    }, 90_000);
  });
}

async function ready(hub: TestHub): Promise<boolean> {
  try {
    return (await fetch(`${hub.url}/health/ready`, { signal: AbortSignal.timeout(2000) })).status === 200;
  } catch {
    return false;
  }
}
