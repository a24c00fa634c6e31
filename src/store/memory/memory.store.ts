import { schemaDefaults } from '../../config/config';
import type { ConversationLogLimits } from '../conversation-log';
import type { Store } from '../store';
import { quotaOf, type BotQuota } from '../bot-quota';
import { MemoryConversationLog, type MemoryLogBounds } from './memory-conversation.store';
import { MemoryAgentDepartures } from './memory-agent-departures.store';
import { MemoryControlStore } from './memory-control.store';
import { MemoryApiKeyStore } from './memory-api-key.store';
import { MemoryDeactivationStore } from './memory-deactivation.store';
import { MemoryDedupeStore } from './memory-dedupe.store';
import { MemoryIntake } from './memory-intake';
import { MemoryPresenceStore } from './memory-presence.store';
import { MemoryLimiterFactory } from './memory-limiters';
import { MemoryUserStore } from './memory-user.store';
import { MemoryApprovalStore } from './memory-approval.store';
import { MemoryStreamStore } from './memory-stream.store';

/** State of the embedded single replica. Lost on restart. */
export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  readonly dedupe = new MemoryDedupeStore();
  readonly deactivations = new MemoryDeactivationStore();
  readonly presence = new MemoryPresenceStore();
  readonly users = new MemoryUserStore();
  readonly apiKeys = new MemoryApiKeyStore();
  readonly limiters = new MemoryLimiterFactory();
  readonly log: MemoryConversationLog;
  readonly departures = new MemoryAgentDepartures();
  readonly control = new MemoryControlStore();
  readonly intake: MemoryIntake;
  readonly streams: MemoryStreamStore;
  readonly approvals = new MemoryApprovalStore();

  /** Unset limits, bounds and quota are the configuration's defaults (HISTORY_*, BOT_*). */
  constructor(log: { limits?: ConversationLogLimits; bounds?: MemoryLogBounds; quota?: BotQuota } = {}) {
    const defaults = schemaDefaults();
    const quota = log.quota ?? quotaOf(defaults);
    this.log = new MemoryConversationLog(
      log.limits ?? { maxMessages: defaults.HISTORY_MAX_MESSAGES, ttlS: defaults.HISTORY_TTL_S },
      log.bounds ?? {
        maxConversations: defaults.HISTORY_MEMORY_MAX_CONVERSATIONS,
        maxMessages: defaults.HISTORY_MEMORY_MAX_MESSAGES,
        maxBytes: defaults.HISTORY_MEMORY_MAX_BYTES,
      },
      quota,
      this.control,
    );
    this.streams = new MemoryStreamStore(this.log, quota);
    this.intake = new MemoryIntake(this.dedupe, this.presence, this.log, this.control);
  }

  async close(): Promise<void> {
    this.dedupe.clear();
    this.streams.clear();
    this.approvals.clear();
    this.departures.marks.clear();
    this.control.clear();
    await this.log.close();
  }
}
