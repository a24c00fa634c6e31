// A DEFAULT socket.io-client (long-polling first, then the websocket upgrade) through the nginx of
// `npm run cluster` (deploy/cluster.cjs + deploy/nginx.conf) to three real hub replicas (dist/main.js).
// Behind a balancer without stickiness the polls of one session land on replicas that never saw it
// ("Session ID unknown", xhr poll error); deploy/nginx.conf pins polling sessions by client address.
import http from 'node:http';
import { startCluster, type ClusterHandle } from '../../deploy/cluster.cjs';
import { chatToken, connectAgent, connectClient, roundTrips, type ChatClient } from '../containers/support/peers';

const AGENT_ID = 'polling-bot';
// 127.0.0.x are all loopback on Linux: distinct client addresses, so the address hash spreads the
// polling clients over the replicas instead of pinning all of them to one.
// Ten of them: the chance that the hash puts all on one of three replicas is 3^-9.
const ADDRESSES = Array.from({ length: 10 }, (_, i) => `127.0.0.${i + 1}`);

describe('default socket.io-client through npm run cluster (nginx + 3 replicas)', () => {
  let cluster: ClusterHandle;
  const logs = new Map<string, string[]>();
  const closers: (() => void)[] = [];

  beforeAll(async () => {
    cluster = await startCluster({
      replicas: 3,
      env: { LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '2000', DEMO_ENABLED: 'false' },
      onLog: (name, line) => logs.set(name, [...(logs.get(name) ?? []), line]),
    });
  }, 60_000);

  afterAll(async () => {
    closers.forEach((close) => close());
    await cluster?.stop();
  }, 30_000);

  /** The replica whose log accepted the handshake of `socketId`. */
  const replicaOf = (socketId: string | undefined) =>
    [...logs].find(([, lines]) => lines.some((l) => l.includes('handshake accepted') && l.includes(`"socketId":"${socketId}"`)))?.[0];

  test('completes 200 round trips, every client upgraded from polling, with no error', async () => {
    const agent = await connectAgent(cluster.url, cluster.secrets.AGENT_API_KEYS, AGENT_ID, { echo: true });
    closers.push(() => agent.socket.close());

    const errors: string[] = [];
    const clients: ChatClient[] = [];
    for (const [i, address] of ADDRESSES.entries()) {
      // The first one with no options at all; the others differ only in their source address.
      const httpAgent = i === 0 ? undefined : new http.Agent({ keepAlive: true, localAddress: address });
      const client = await connectClient(cluster.url, chatToken(cluster.secrets.JWT_SECRET, `poller-${i}`), AGENT_ID, {
        transport: 'default',
        agent: httpAgent,
      });
      closers.push(() => {
        client.socket.close();
        httpAgent?.destroy();
      });
      client.socket.on('connect_error', (err) => errors.push(`${address} connect_error ${err.message}`));
      client.socket.on('disconnect', (reason) => errors.push(`${address} disconnect ${reason}`));
      await client.upgraded();
      clients.push(client);
    }

    await roundTrips(clients, 200, 'poll');
    expect(errors).toEqual([]);
    for (const client of clients) {
      // Opened with long-polling, upgraded once, no failed upgrade, still on the websocket.
      expect({ transports: client.transports, upgradeErrors: client.upgradeErrors }).toEqual({
        transports: ['polling', 'websocket'],
        upgradeErrors: [],
      });
      expect(client.socket.io.engine.transport.name).toBe('websocket');
    }

    // Spread and relayed across replicas: the agent's replica is not every client's.
    const agentReplica = replicaOf(agent.socket.id);
    const clientReplicas = new Set(clients.map((c) => replicaOf(c.socket.id)));
    expect(agentReplica).toBeDefined();
    expect(clientReplicas.has(undefined)).toBe(false);
    expect(clientReplicas.size).toBeGreaterThanOrEqual(2);
    expect([...clientReplicas].some((r) => r !== agentReplica)).toBe(true);
  }, 60_000);
});
