/** What one bot may keep in the hub's storage (docs/operations.md, "Storage quotas per bot"). */
export const quotaSchema = {
  BOT_STORAGE_MAX_BYTES: {
    doc: "Bytes one bot's conversation logs and open streams' text may hold, in memory or in Redis, over every replica: past it the bot's least recently written conversations are dropped to make room, and what still does not fit (its open streams' text holding it) gets QUOTA_EXCEEDED. 16 MiB by default: five bots at full quota fit the chart's Redis maxmemory of 200 MB (Redis may take up to twice the count for open streams' text); size Redis as bots × 2 × this + 32 MB (docs/operations.md, storage quotas per bot).",
    format: 'positive-int',
    default: 16777216,
    env: 'BOT_STORAGE_MAX_BYTES',
  },
  BOT_MAX_CONVERSATIONS: {
    doc: "Conversation logs one bot may keep (its broadcast log counts as one): a new conversation past it drops the bot's least recently written one, never another bot's.",
    format: 'positive-int',
    default: 10000,
    env: 'BOT_MAX_CONVERSATIONS',
  },
  BOT_MAX_OPEN_STREAMS: {
    doc: 'Streams one bot may have open at once over all its runtime sockets and replicas (beside STREAM_MAX_OPEN per socket); stream:start beyond it gets QUOTA_EXCEEDED.',
    format: 'positive-int',
    default: 500,
    env: 'BOT_MAX_OPEN_STREAMS',
  },
};
