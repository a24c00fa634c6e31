import { Cluster } from 'ioredis';
import { startRedisCluster, type TestRedisCluster } from '../../helpers/redis-topologies';
import { describeRedisStore } from './redis-store.suite';

// Every script, transaction and multi-key command of the stores, on a real 3-master Redis Cluster.
jest.setTimeout(60_000);

let cluster: TestRedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

describeRedisStore(
  'redis cluster',
  () =>
    new Cluster(
      cluster.nodes.slice(0, 3).map((n) => ({ host: '127.0.0.1', port: n.port })),
      { redisOptions: { maxRetriesPerRequest: 1 } },
    ),
);

afterAll(async () => {
  await cluster?.close();
});
