// A hub cluster started from the built image with testcontainers: Redis and two hub replicas on a
// user-defined network, the way an orchestrator runs them; then the cross-replica relay checks.
//
// The Redis and Node base images are LOCAL STAND-INS for the official Docker Hub images (see
// scripts/containers/stand-ins.sh), made because no registry is reachable on the machines this tier
// runs on.
import { randomUUID } from 'node:crypto';
import { GenericContainer, Network, Wait, type StartedNetwork, type StartedTestContainer } from 'testcontainers';
import { RUN_LABEL } from './support/docker-env';
import { HUB_IMAGE, REDIS_IMAGE, TOKEN_CLI } from './support/paths';
import { chatToken, connectAgent, hubSecrets, connectClient, roundTrips, type ChatClient } from './support/peers';

const AGENT_ID = 'cluster-bot';

describe('two hub replicas from the image on one Redis (testcontainers network)', () => {
  // ADMIN_JWT_SECRET signs the admin tokens the ADMIN REST routes accept (`token --admin`), apart from JWT_SECRET.
  const secrets = hubSecrets();
  let network: StartedNetwork;
  let redis: StartedTestContainer;
  const hubs: StartedTestContainer[] = [];
  const urls: string[] = [];
  const closers: (() => void)[] = [];

  beforeAll(async () => {
    network = await new Network().start();
    redis = await new GenericContainer(REDIS_IMAGE)
      .withLabels({ [RUN_LABEL]: 'cluster' })
      .withNetwork(network)
      .withNetworkAliases('redis')
      .withCommand(['redis-server', '--appendonly', 'yes'])
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .start();
    const started = await Promise.all(
      ['hub-a', 'hub-b'].map((name) =>
        new GenericContainer(HUB_IMAGE)
          .withLabels({ [RUN_LABEL]: 'cluster' })
          .withNetwork(network)
          .withNetworkAliases(name)
          .withEnvironment({ ...secrets, REDIS_URL: 'redis://redis:6379', LOG_LEVEL: 'warn', SHUTDOWN_GRACE_MS: '2000' })
          .withTmpFs({ '/tmp': 'rw,size=16m' })
          .withExposedPorts(3000)
          .withWaitStrategy(Wait.forHttp('/health/ready', 3000))
          .withStartupTimeout(60_000)
          .start(),
      ),
    );
    hubs.push(...started);
    urls.push(...hubs.map((h) => `http://${h.getHost()}:${h.getMappedPort(3000)}`));
  });

  afterAll(async () => {
    closers.forEach((close) => close());
    await Promise.all(hubs.map((h) => h.stop({ timeout: 0, remove: true })));
    await redis?.stop({ timeout: 0, remove: true });
    await network?.stop();
  });

  const client = async (hub: number, sub: string): Promise<ChatClient> => {
    const c = await connectClient(urls[hub], chatToken(secrets.JWT_SECRET, sub), AGENT_ID);
    closers.push(() => c.socket.close());
    return c;
  };

  test('both replicas are ready only with Redis: the readiness probe round-trips pub/sub', async () => {
    for (const url of urls) {
      const res = await fetch(`${url}/health/ready`);
      expect(res.status).toBe(200);
    }
  });

  test('an agent on one replica and clients on the other relay 100 round trips', async () => {
    const agent = await connectAgent(urls[0], secrets.AGENT_API_KEYS, AGENT_ID, { echo: true });
    closers.push(() => agent.socket.close());
    const far = [await client(1, 'far-1'), await client(1, 'far-2')];
    const near = await client(0, 'near-1');
    const ids = await roundTrips([...far, near], 100, 'cross');
    expect(new Set(agent.received.map((m) => m.id))).toEqual(new Set(ids));
    expect(agent.received.filter((m) => m.from === 'far-1')).toHaveLength(34);
  });

  test('a reply to one user reaches every tab of it on both replicas', async () => {
    const agent = await connectAgent(urls[1], secrets.AGENT_API_KEYS, 'tabs-bot');
    closers.push(() => agent.socket.close());
    const tabs = await Promise.all(
      [0, 1].map(async (hub) => {
        const c = await connectClient(urls[hub], chatToken(secrets.JWT_SECRET, 'tabbed'), 'tabs-bot');
        closers.push(() => c.socket.close());
        return c;
      }),
    );
    const ack = (await agent.socket.timeout(10_000).emitWithAck('reply', { to: 'tabbed', text: 'to every tab' })) as {
      ok: boolean;
      id: string;
    };
    expect(ack.ok).toBe(true);
    for (const tab of tabs) expect((await tab.waitFor((m) => m.id === ack.id)).text).toBe('to every tab');
  });

  test('a message repeated on the other replica is deduplicated across the cluster', async () => {
    const agent = await connectAgent(urls[0], secrets.AGENT_API_KEYS, 'dedupe-bot');
    closers.push(() => agent.socket.close());
    const [first, second] = await Promise.all(
      [0, 1].map(async (hub) => {
        const c = await connectClient(urls[hub], chatToken(secrets.JWT_SECRET, 'repeater'), 'dedupe-bot');
        closers.push(() => c.socket.close());
        return c;
      }),
    );
    const clientMessageId = randomUUID();
    const a = await first.send('once', clientMessageId);
    const b = await second.send('once', clientMessageId);
    expect(a.ok && b.ok).toBe(true);
    expect(b).toEqual(a); // the stored ack, same id and ts
    expect(agent.received.filter((m) => m.text === 'once')).toHaveLength(1);
  });

  test('state written through one replica is read through the other (users over REST)', async () => {
    // The first ADMIN token, the documented way: the token CLI inside a hub container.
    const minted = await hubs[0].exec([...TOKEN_CLI, '--sub', 'ops', '--admin', '--expires-in', '10m']);
    expect(minted.exitCode).toBe(0);
    const admin = minted.stdout.trim().split('\n').pop()!;
    const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' };
    const id = `user-${randomUUID()}`;
    const created = await fetch(`${urls[0]}/users`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id, email: `${id}@example.com`, name: 'Cluster User' }),
    });
    expect(created.status).toBe(201);
    const read = await fetch(`${urls[1]}/users/${id}`, { headers });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { data: { email: string } }).data.email).toBe(`${id}@example.com`);
  });
});
