import { startRedisSentinel, type TestSentinel } from '../helpers/redis-topologies';
import { describeTopology } from './topology.scenarios';
import { waitFor } from '../helpers/wait';

// Redis Sentinel: 1 master, 1 replica, 3 Sentinels (down-after 1 s); killing the master promotes the replica.
let sentinel: TestSentinel;

beforeAll(async () => {
  sentinel = await startRedisSentinel();
}, 60_000);

describeTopology('Redis Sentinel', () => ({
  env: sentinel.env,
  async killMaster() {
    await (await sentinel.master()).kill();
  },
  async recovered() {
    await waitFor(async () => (await sentinel.master()).alive(), 30_000, 'a replica promoted', 200);
  },
}));

afterAll(async () => {
  await sentinel?.close();
}, 30_000);
