/**
 * What one bot may keep in the store (docs/operations.md, "Storage quotas per bot"), enforced by
 * every store backend alike: the bot's least recently written conversations make room for its new
 * messages, never another bot's; what cannot be made room for is refused with
 * {@link QuotaExceededError}. See docs/adr/0109-storage-quota-per-bot.md for how Redis counts.
 */
export interface BotQuota {
  /** Bytes of the bot's conversation logs and open streams' text (BOT_STORAGE_MAX_BYTES). */
  maxBytes: number;
  /** Conversation logs of the bot, its broadcast log counted as one (BOT_MAX_CONVERSATIONS). */
  maxConversations: number;
  /** Streams of the bot open at once, over every runtime and replica (BOT_MAX_OPEN_STREAMS). */
  maxOpenStreams: number;
}

/** What a quota counts besides the text itself: a log entry's and an open stream's bookkeeping. */
export const QUOTA_ENTRY_OVERHEAD = 64;
export const QUOTA_STREAM_OVERHEAD = 512;

/** Thrown by a store when a write of `agentId` does not fit its quota: nothing was written. */
export class QuotaExceededError extends Error {
  constructor(
    readonly agentId: string,
    readonly limit: 'bytes' | 'streams',
  ) {
    super(
      limit === 'streams'
        ? `bot ${agentId} has BOT_MAX_OPEN_STREAMS streams open`
        : `bot ${agentId} holds BOT_STORAGE_MAX_BYTES in open streams; nothing was stored`,
    );
    this.name = 'QuotaExceededError';
  }
}

/** The quota the configuration sets (BOT_STORAGE_MAX_BYTES, BOT_MAX_CONVERSATIONS, BOT_MAX_OPEN_STREAMS). */
export function quotaOf(config: { BOT_STORAGE_MAX_BYTES: number; BOT_MAX_CONVERSATIONS: number; BOT_MAX_OPEN_STREAMS: number }): BotQuota {
  return {
    maxBytes: config.BOT_STORAGE_MAX_BYTES,
    maxConversations: config.BOT_MAX_CONVERSATIONS,
    maxOpenStreams: config.BOT_MAX_OPEN_STREAMS,
  };
}
