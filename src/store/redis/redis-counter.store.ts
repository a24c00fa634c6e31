import type Redis from 'ioredis';
import type { CounterStore } from '../store';

/** Fixed windows: INCR, and EXPIRE NX in the same MULTI so the window starts at the first hit. */
export class RedisCounterStore implements CounterStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async increment(key: string, windowS: number): Promise<number> {
    const k = this.key(key);
    const results = await this.redis.multi().incr(k).call('EXPIRE', k, Math.max(1, Math.ceil(windowS)), 'NX').exec();
    if (!results) throw new Error('counter transaction aborted');
    const [incr, expire] = results;
    if (incr[0]) throw incr[0];
    if (expire[0]) throw expire[0];
    return Number(incr[1]);
  }

  async get(key: string): Promise<number> {
    return Number((await this.redis.get(this.key(key))) ?? 0);
  }

  private key(key: string): string {
    return `${this.prefix}counter:${key}`;
  }
}
