import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord, Store } from '../../store/store';
import { NotFoundError } from '../errors';
import type { ApiKeyDto, ApiKeyScope, CreateApiKeyDto, CreatedApiKeyDto } from '../models/api-key.dto';

/** Characters of a key kept in clear as its `prefix`. */
const PREFIX_LENGTH = 9;

/**
 * REST API keys. The secret is generated here, returned once, and stored only as its SHA-256
 * hash; a presented key is looked up by hash and the digests are compared in constant time.
 */
export class ApiKeysService {
  constructor(private readonly store: Store) {}

  async list(): Promise<ApiKeyDto[]> {
    return (await this.store.apiKeys.list()).map(toDto);
  }

  async get(id: string): Promise<ApiKeyDto> {
    const record = await this.store.apiKeys.get(id);
    if (!record) throw notFound(id);
    return toDto(record);
  }

  async create(body: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    const key = `rk_${randomBytes(32).toString('base64url')}`;
    const record: ApiKeyRecord = {
      id: randomUUID(),
      name: body.name,
      scopes: [...new Set(body.scopes)],
      prefix: key.slice(0, PREFIX_LENGTH),
      hash: hashKey(key).toString('hex'),
      createdAt: new Date().toISOString(),
      lastUsedAt: null,
    };
    await this.store.apiKeys.create(record);
    return { ...toDto(record), key };
  }

  async delete(id: string): Promise<ApiKeyDto> {
    const record = await this.store.apiKeys.delete(id);
    if (!record) throw notFound(id);
    return toDto(record);
  }

  /** The key record of a presented secret, or null; records when it was last used. */
  async authenticate(presented: string): Promise<ApiKeyRecord | null> {
    const digest = hashKey(presented);
    const record = await this.store.apiKeys.findByHash(digest.toString('hex'));
    if (!record) return null;
    const stored = Buffer.from(record.hash, 'hex');
    if (stored.length !== digest.length || !timingSafeEqual(stored, digest)) return null;
    await this.store.apiKeys.touch(record.id, new Date().toISOString());
    return record;
  }
}

export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function toDto(record: ApiKeyRecord): ApiKeyDto {
  return {
    id: record.id,
    name: record.name,
    scopes: record.scopes as ApiKeyScope[],
    prefix: record.prefix,
    createdAt: new Date(record.createdAt),
    ...(record.lastUsedAt === null ? {} : { lastUsedAt: new Date(record.lastUsedAt) }),
  };
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`No API key with id "${id}".`);
}
