import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { sha256 } from '../../auth/agent-keys';
import { isAgentPattern, keyAgentPatterns } from '../../auth/agent-patterns';
import type { RelayService } from '../../relay/relay.service';
import type { ApiKeyRecord, Store } from '../../store/store';
import { NotFoundError, ValidationError } from '../errors';
import type { ApiKeyDto, ApiKeyScope, CreateApiKeyDto, CreatedApiKeyDto } from '../models/api-key.dto';

/** Characters of a key kept in clear as its `prefix`. */
const PREFIX_LENGTH = 9;

/**
 * REST API keys. The secret is generated here, returned once, and stored only as its SHA-256
 * hash; a presented key is looked up by hash and the digests are compared in constant time.
 */
export class ApiKeysService {
  constructor(
    private readonly store: Store,
    private readonly relay: Pick<RelayService, 'sessions'>,
  ) {}

  async list(): Promise<ApiKeyDto[]> {
    return (await this.store.apiKeys.list()).map(toDto);
  }

  async get(id: string): Promise<ApiKeyDto> {
    const record = await this.store.apiKeys.get(id);
    if (!record) throw notFound(id);
    return toDto(record);
  }

  async create(body: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    const scopes = [...new Set(body.scopes)];
    const agentIds = checkBinding(body.agentIds);
    const key = `rk_${randomBytes(32).toString('base64url')}`;
    const record: ApiKeyRecord = {
      id: randomUUID(),
      name: body.name,
      scopes,
      prefix: key.slice(0, PREFIX_LENGTH),
      hash: hashKey(key).toString('hex'),
      createdAt: new Date().toISOString(),
      lastUsedAt: null,
      agentIds,
      adminRecipient: body.adminRecipient === true,
    };
    await this.store.apiKeys.create(record);
    return { ...toDto(record), key };
  }

  /** Deletes the key and ends the live runtimes that connected with it, on every replica. */
  async delete(id: string): Promise<ApiKeyDto> {
    const record = await this.store.apiKeys.delete(id);
    if (!record) throw notFound(id);
    this.relay.sessions.revokeApiKey(record.id);
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
  return sha256(key);
}

/**
 * Every scope acts for bots (serving, publishing, history, minting), so every key names its bots
 * (the body's schema requires them): agentIds or prefixes ending in `*`, `["*"]` for every bot.
 */
function checkBinding(agentIds: string[]): string[] {
  const bad = agentIds.findIndex((p) => !isAgentPattern(p));
  if (bad >= 0) {
    throw new ValidationError([{ path: `body.agentIds.${bad}`, message: 'must be an agentId, or a prefix of one ending in *' }]);
  }
  return [...new Set(agentIds)];
}

function toDto(record: ApiKeyRecord): ApiKeyDto {
  return {
    id: record.id,
    name: record.name,
    scopes: record.scopes as ApiKeyScope[],
    prefix: record.prefix,
    agentIds: [...keyAgentPatterns(record)],
    adminRecipient: record.adminRecipient === true,
    createdAt: new Date(record.createdAt),
    ...(record.lastUsedAt === null ? {} : { lastUsedAt: new Date(record.lastUsedAt) }),
  };
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`No API key with id "${id}".`);
}
