import type { CounterStore } from '../store';
import { TtlMap } from './ttl-map';

export class MemoryCounterStore implements CounterStore {
  readonly counters = new TtlMap<{ count: number }>();

  async increment(key: string, windowS: number): Promise<number> {
    const existing = this.counters.get(key);
    if (existing) return ++existing.count;
    this.counters.set(key, { count: 1 }, windowS * 1000);
    return 1;
  }

  async get(key: string): Promise<number> {
    return this.counters.get(key)?.count ?? 0;
  }
}
