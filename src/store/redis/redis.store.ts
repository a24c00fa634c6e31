import type Redis from 'ioredis';
import type { Store } from '../store';
import { RedisApiKeyStore } from './redis-api-key.store';
import { RedisCounterStore } from './redis-counter.store';
import { RedisDeactivationStore } from './redis-deactivation.store';
import { RedisDedupeStore } from './redis-dedupe.store';
import { RedisPresenceStore } from './redis-presence.store';
import { RedisUserStore } from './redis-user.store';

export interface RedisStoreOptions {
  /** Prefix of every key (default `relay:`), so several hubs or tests can share one Redis. */
  prefix?: string;
  /** Lifetime of presence entries unless refreshed (PRESENCE_TTL_S). */
  presenceTtlS?: number;
}

/**
 * State shared by every replica, on one standalone Redis (≥ 7.0). The client is owned by the
 * caller: `close()` does not quit it, so the infrastructure decides when connections end.
 */
export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  readonly dedupe: RedisDedupeStore;
  readonly deactivations: RedisDeactivationStore;
  readonly presence: RedisPresenceStore;
  readonly users: RedisUserStore;
  readonly apiKeys: RedisApiKeyStore;
  readonly counters: RedisCounterStore;

  constructor(redis: Redis, options: RedisStoreOptions = {}) {
    const prefix = options.prefix ?? 'relay:';
    this.dedupe = new RedisDedupeStore(redis, prefix);
    this.deactivations = new RedisDeactivationStore(redis, prefix);
    this.presence = new RedisPresenceStore(redis, prefix, options.presenceTtlS ?? 30);
    this.users = new RedisUserStore(redis, prefix);
    this.apiKeys = new RedisApiKeyStore(redis, prefix);
    this.counters = new RedisCounterStore(redis, prefix);
  }

  async close(): Promise<void> {}
}
