import type { ApiKeyRecord, ApiKeyStore } from '../store';

export class MemoryApiKeyStore implements ApiKeyStore {
  private readonly keys = new Map<string, ApiKeyRecord>();

  async list(): Promise<ApiKeyRecord[]> {
    return [...this.keys.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async get(id: string): Promise<ApiKeyRecord | null> {
    return this.keys.get(id) ?? null;
  }

  async create(record: ApiKeyRecord): Promise<void> {
    this.keys.set(record.id, { ...record });
  }

  async delete(id: string): Promise<ApiKeyRecord | null> {
    const record = this.keys.get(id) ?? null;
    this.keys.delete(id);
    return record;
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    for (const record of this.keys.values()) if (record.hash === hash) return record;
    return null;
  }

  async touch(id: string, at: string): Promise<void> {
    const record = this.keys.get(id);
    if (record) record.lastUsedAt = at;
  }
}
