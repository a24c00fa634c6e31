import type { DedupeRecord, DedupeStore } from '../store';
import { TtlMap } from './ttl-map';

export class MemoryDedupeStore implements DedupeStore {
  readonly records = new TtlMap<DedupeRecord>();

  async claim(key: string, record: DedupeRecord, ttlS: number): Promise<DedupeRecord | null> {
    const existing = this.records.get(key);
    if (existing) return existing;
    this.records.set(key, record, ttlS * 1000);
    return null;
  }

  async markDelivered(key: string, record: DedupeRecord, ttlS: number): Promise<void> {
    this.records.set(key, { ...record, delivered: true }, ttlS * 1000);
  }
}
