import { schemaDefaults } from '../../config/config';
import type { ConversationLogLimits } from '../conversation-log';
import type { RedisClient } from './redis-client';
import type { Store } from '../store';
import { quotaOf, type BotQuota } from '../bot-quota';
import { RedisAgentDepartures } from './redis-agent-departures.store';
import { RedisControlStore } from './redis-control.store';
import { RedisApiKeyStore } from './redis-api-key.store';
import { RedisLimiterFactory } from './redis-limiters';
import { RedisDeactivationStore } from './redis-deactivation.store';
import { RedisDedupeStore } from './redis-dedupe.store';
import { RedisPresenceStore } from './redis-presence.store';
import { RedisUserStore } from './redis-user.store';
import { RedisConversationLog } from './redis-conversation.store';
import { RedisMessageIntake } from './redis-message-intake';
import { RedisApprovalStore } from './redis-approval.store';
import { RedisStreamStore } from './redis-stream.store';

export interface RedisStoreOptions {
  /** Prefix of every key (default `relay:`), so several hubs or tests can share one Redis. */
  prefix?: string;
  /** Lifetime of presence entries unless refreshed (PRESENCE_TTL_S; its default when unset). */
  presenceTtlS?: number;
  /** Conversation log trim and TTL (HISTORY_MAX_MESSAGES, HISTORY_TTL_S; their defaults when unset). */
  history?: ConversationLogLimits;
  /**
   * Told of a conversation the log could not add to its user's index (deleteUser reads it): the
   * append itself succeeded, and the conversation's next append tries again. Ignored when not given.
   */
  onIndexFailure?: (err: unknown) => void;
  /** What one bot may store (BOT_STORAGE_MAX_BYTES, BOT_MAX_CONVERSATIONS, BOT_MAX_OPEN_STREAMS; their defaults when unset). */
  quota?: BotQuota;
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
  readonly limiters: RedisLimiterFactory;
  readonly log: RedisConversationLog;
  readonly departures: RedisAgentDepartures;
  readonly control: RedisControlStore;
  readonly intake: RedisMessageIntake;
  readonly streams: RedisStreamStore;
  readonly approvals: RedisApprovalStore;

  constructor(redis: RedisClient, options: RedisStoreOptions = {}) {
    const prefix = options.prefix ?? 'relay:';
    const defaults = schemaDefaults();
    this.dedupe = new RedisDedupeStore(redis, prefix);
    this.deactivations = new RedisDeactivationStore(redis, prefix);
    this.presence = new RedisPresenceStore(redis, prefix, options.presenceTtlS ?? defaults.PRESENCE_TTL_S);
    this.users = new RedisUserStore(redis, prefix);
    this.apiKeys = new RedisApiKeyStore(redis, prefix);
    this.limiters = new RedisLimiterFactory(redis, prefix);
    this.departures = new RedisAgentDepartures(redis, prefix);
    this.control = new RedisControlStore(redis, prefix);
    this.log = new RedisConversationLog(
      redis,
      prefix,
      options.history ?? { maxMessages: defaults.HISTORY_MAX_MESSAGES, ttlS: defaults.HISTORY_TTL_S },
      options.onIndexFailure,
      options.quota ?? quotaOf(defaults),
    );
    this.streams = new RedisStreamStore(redis, prefix, this.log);
    this.approvals = new RedisApprovalStore(redis, prefix);
    this.intake = new RedisMessageIntake(redis, prefix, this.dedupe, this.presence, this.log);
  }

  async close(): Promise<void> {}
}
