import { startRedisSentinel, type TestSentinel } from '../helpers/redis-topologies';
import { describeTopology } from './topology.scenarios';

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
    const deadline = Date.now() + 30_000;
    while (!(await sentinel.master()).alive()) {
      if (Date.now() > deadline) throw new Error('no replica was promoted within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  },
}));

afterAll(async () => {
  await sentinel?.close();
}, 30_000);
