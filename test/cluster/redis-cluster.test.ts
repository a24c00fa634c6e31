import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-topologies';
import { describeTopology } from './topology.scenarios';

// Redis Cluster: 3 masters + 3 replicas (cluster-node-timeout 1 s); killing a master promotes its replica.
let cluster: TestRedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

describeTopology('Redis Cluster', () => ({
  env: cluster.env,
  async killMaster(agentId) {
    // The master holding the bot's presence keys (its hash tag).
    await (await cluster.masterOf(await cluster.keySlot(agentId))).kill();
  },
  recovered: () => cluster.healthy(30_000),
}));

afterAll(async () => {
  await cluster?.close();
}, 30_000);
