/** The conversation log: what is kept, for how long, and what a reconnect replays. */
export const historySchema = {
  HISTORY_ENABLED: {
    doc: 'Keep the conversation log (docs/protocol.md, delivery guarantees): every message is written before delivery, replayed on reconnect (lastMessageId) and served by the history event and REST. false turns logging, recovery and history off.',
    format: 'strict-boolean',
    default: true,
    env: 'HISTORY_ENABLED',
  },
  HISTORY_MAX_MESSAGES: {
    doc: 'Messages kept per conversation (and per bot for broadcasts); older ones are trimmed.',
    format: 'positive-int',
    default: 200,
    env: 'HISTORY_MAX_MESSAGES',
  },
  HISTORY_TTL_S: {
    doc: 'Seconds a conversation log is kept after its last message.',
    format: 'positive-int',
    default: 604800,
    env: 'HISTORY_TTL_S',
  },
  HISTORY_MEMORY_MAX_CONVERSATIONS: {
    doc: 'Embedded (in-memory) log only: conversations kept; the least recently used go first.',
    format: 'positive-int',
    default: 10000,
    env: 'HISTORY_MEMORY_MAX_CONVERSATIONS',
  },
  HISTORY_MEMORY_MAX_MESSAGES: {
    doc: 'Embedded (in-memory) log only: messages kept over all conversations; the least recently used conversations go first.',
    format: 'positive-int',
    default: 200000,
    env: 'HISTORY_MEMORY_MAX_MESSAGES',
  },
  HISTORY_MEMORY_MAX_BYTES: {
    doc: "Embedded (in-memory) log only: bytes its conversations may hold (each one's buffer, used or not), 64 MiB by default; the least recently used conversations go first. One conversation is always kept whole, so keep this above about 4 × HISTORY_MAX_MESSAGES × MAX_MESSAGE_BYTES (51 MiB at the defaults) for the bound to hold; see docs/operations.md (the embedded log in bytes).",
    format: 'positive-int',
    default: 67108864,
    env: 'HISTORY_MEMORY_MAX_BYTES',
  },
  REPLAY_MAX_BYTES: {
    doc: "Most bytes (UTF-8 JSON of the messages) replayed to a reconnecting client (lastMessageId), and at most what the user's USER_READ_BYTES_PER_S budget holds: past it the newest missed messages that fit are replayed, session says recovered: true and hasMore: true, and the client pages the older ones with history before the oldest replayed (the browser SDK does it by itself). 1 MiB by default, MAX_SOCKET_BUFFER_BYTES's default; see docs/protocol.md (recovery).",
    format: 'positive-int',
    default: 1048576,
    env: 'REPLAY_MAX_BYTES',
  },
  RECOVERY_MAX_MESSAGES: {
    doc: 'Most messages replayed to a reconnecting client (lastMessageId); when more are missing nothing is replayed and session.recovered is false.',
    format: 'positive-int',
    default: 200,
    env: 'RECOVERY_MAX_MESSAGES',
  },
};

/** How long client messages wait for a bot whose runtimes all left. */
export const agentGraceSchema = {
  AGENT_RECONNECT_GRACE_MS: {
    doc: 'After the last runtime of a bot leaves, client messages wait this long for a runtime to connect (on any replica) before AGENT_OFFLINE, and agent:status offline is announced only when it ends (0 = no grace).',
    format: 'whole-number',
    default: 15000,
    env: 'AGENT_RECONNECT_GRACE_MS',
  },
};
