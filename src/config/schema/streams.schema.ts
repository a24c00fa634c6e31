/** Streamed replies (docs/streaming.md) and activity states. */
export const streamsSchema = {
  STREAM_MAX_BYTES: {
    doc: 'Largest accumulated content of a streamed reply, in UTF-8 bytes: its text deltas and the JSON of its parts and updates; a change beyond it gets PAYLOAD_TOO_LARGE and changes nothing.',
    format: 'positive-int',
    default: 262144,
    env: 'STREAM_MAX_BYTES',
  },
  MESSAGE_MAX_PARTS: {
    doc: 'Most parts one message may carry (reply, publish, stream, user message); past it INVALID_PAYLOAD and nothing changes (docs/parts.md).',
    format: 'positive-int',
    default: 64,
    env: 'MESSAGE_MAX_PARTS',
  },
  APPROVAL_TTL_S: {
    doc: "Seconds after a bot message was sent that a user may still decide on its tool calls' approval requests; later decisions get APPROVAL_EXPIRED.",
    format: 'positive-int',
    default: 86400,
    env: 'APPROVAL_TTL_S',
  },
  STREAM_MAX_OPEN: {
    doc: 'Most streams one runtime socket may have open at once; stream:start beyond it gets STREAM_LIMIT.',
    format: 'positive-int',
    default: 100,
    env: 'STREAM_MAX_OPEN',
  },
  STREAM_IDLE_TIMEOUT_MS: {
    doc: 'A stream with no delta for this long is ended by the hub with status timeout. A stream whose replica died is ended interrupted within this time by another replica.',
    format: 'positive-int',
    default: 60000,
    env: 'STREAM_IDLE_TIMEOUT_MS',
  },
  STREAM_MAX_DURATION_MS: {
    doc: 'A stream open this long is ended by the hub with status timeout, however active.',
    format: 'positive-int',
    default: 600000,
    env: 'STREAM_MAX_DURATION_MS',
  },
  STREAM_STOP_GRACE_MS: {
    doc: 'After a user stops a stream, its runtime has this long to end it (status cancelled) before the hub ends it itself.',
    format: 'whole-number',
    default: 5000,
    env: 'STREAM_STOP_GRACE_MS',
  },
  STREAM_DELTA_RATE_PER_S: {
    doc: 'Sustained stream:delta rate per runtime socket (a token bucket separate from replies); beyond it a delta gets RATE_LIMITED.',
    format: 'positive-int',
    default: 200,
    env: 'STREAM_DELTA_RATE_PER_S',
  },
  STREAM_DELTA_RATE_BURST: {
    doc: 'Burst of the stream:delta token bucket per runtime socket.',
    format: 'positive-int',
    default: 400,
    env: 'STREAM_DELTA_RATE_BURST',
  },
  ACTIVITY_TTL_MS: {
    doc: 'How long an agent:activity state holds on the clients without a new activity: the hub sends idle itself after it (and when a message or stream of the bot reaches that client).',
    format: 'positive-int',
    default: 15000,
    env: 'ACTIVITY_TTL_MS',
  },
};
