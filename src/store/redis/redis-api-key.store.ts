import { hashTag, type RedisClient } from './redis-client';
import type { ApiKeyRecord, ApiKeyStore } from '../store';
import { luaScript } from './lua-script';

// keys: hash id → JSON; byHash: hash of the key's hash → id; used: hash id → lastUsedAt, kept apart
// so `touch` on every authenticated request is one HSET, not a read-modify-write of the record.

const DELETE = luaScript('api-key/delete');

const TOUCH = luaScript('api-key/touch');

export class RedisApiKeyStore implements ApiKeyStore {
  private readonly keys: string;
  private readonly byHash: string;
  private readonly used: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    // One hash tag: DELETE, TOUCH and `create`'s MULTI touch several of them.
    const tag = `${prefix}${hashTag('apikeys')}`;
    this.keys = `${tag}:records`;
    this.byHash = `${tag}:hash`;
    this.used = `${tag}:used`;
  }

  async list(): Promise<ApiKeyRecord[]> {
    const [records, used] = await Promise.all([this.redis.hgetall(this.keys), this.redis.hgetall(this.used)]);
    return Object.entries(records)
      .map(([id, raw]) => parse(raw, used[id] ?? null))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async get(id: string): Promise<ApiKeyRecord | null> {
    const [raw, used] = await Promise.all([this.redis.hget(this.keys, id), this.redis.hget(this.used, id)]);
    return raw === null ? null : parse(raw, used);
  }

  async create(record: ApiKeyRecord): Promise<void> {
    const { lastUsedAt, ...rest } = record;
    const tx = this.redis.multi().hset(this.keys, record.id, JSON.stringify(rest)).hset(this.byHash, record.hash, record.id);
    if (lastUsedAt !== null) tx.hset(this.used, record.id, lastUsedAt);
    else tx.hdel(this.used, record.id);
    await tx.exec();
  }

  async delete(id: string): Promise<ApiKeyRecord | null> {
    const result = await DELETE.run<[string, string] | null>(this.redis, [this.keys, this.byHash, this.used], [id]);
    return result === null ? null : parse(result[0], result[1] === '' ? null : result[1]);
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    const id = await this.redis.hget(this.byHash, hash);
    return id === null ? null : this.get(id);
  }

  async touch(id: string, at: string): Promise<void> {
    await TOUCH.run(this.redis, [this.keys, this.used], [id, at]);
  }
}

function parse(raw: string, lastUsedAt: string | null): ApiKeyRecord {
  return { ...(JSON.parse(raw) as Omit<ApiKeyRecord, 'lastUsedAt'>), lastUsedAt };
}
