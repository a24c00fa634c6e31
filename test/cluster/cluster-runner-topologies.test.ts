import type { AgentInboundMessage, ClientInboundMessage } from '../../src/protocol';
import { startCluster, type ClusterHandle } from '../../deploy/cluster.cjs';
import { RelayAgent } from '../../src/sdk/agent';
import { CLUSTER_TEST_ENV } from '../helpers/cluster';
import { clientSocket, connected, nextEvent } from '../helpers/hub';
import { mintToken } from '../helpers/tokens';

// `npm run cluster` with CLUSTER_REDIS=sentinel|cluster: the runner starts the topology, the hubs
// select it, and a message crosses replicas through nginx.
describe.each(['sentinel', 'cluster'] as const)('npm run cluster with CLUSTER_REDIS=%s', (redis) => {
  let handle: ClusterHandle;

  beforeAll(async () => {
    handle = await startCluster({ replicas: 2, redis, env: CLUSTER_TEST_ENV });
  }, 90_000);

  afterAll(async () => {
    await handle?.stop();
  }, 30_000);

  it('gives the hubs only that topology and relays between replicas', async () => {
    const keys = ['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'].filter((k) => handle.env[k] !== undefined);
    expect(keys).toEqual([redis === 'sentinel' ? 'REDIS_SENTINELS' : 'REDIS_CLUSTER_NODES']);
    const [a, b] = handle.replicas;
    const agent = new RelayAgent({ url: a.url, apiKey: handle.secrets.AGENT_API_KEYS, agentId: `runner-${redis}` });
    agent.on('error', () => {});
    agent.onMessage((m: AgentInboundMessage) => agent.reply(m.from, `echo: ${m.text}`).then(() => undefined));
    await agent.connect();
    const client = clientSocket(b.url, { token: mintToken({ sub: 'runner-user' }, handle.secrets.JWT_SECRET), agentId: `runner-${redis}` });
    try {
      await connected(client);
      const reply = nextEvent<ClientInboundMessage>(client, 'message');
      expect(await client.timeout(10_000).emitWithAck('message', { clientMessageId: 'x', text: 'hi' })).toMatchObject({ ok: true });
      expect((await reply).text).toBe('echo: hi');
    } finally {
      client.disconnect();
      agent.close();
    }
  }, 30_000);
});
