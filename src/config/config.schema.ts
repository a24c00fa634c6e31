import convict from 'convict';

const DURATION = /^[1-9]\d{0,4}[smhd]$/;
const SAFE_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;

convict.addFormats({
  'positive-int': {
    validate(value: unknown) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new Error('must be an integer of at least 1');
    },
    coerce: (value: unknown) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value),
  },
  'comma-list': {
    validate(value: unknown) {
      if (value === null) return;
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.length === 0)) {
        throw new Error('must be a comma-separated list of non-empty strings');
      }
    },
    coerce: (value: unknown) => splitList(value),
  },
  'secret-list': {
    validate(value: unknown) {
      if (value === null) return;
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.length < 16)) {
        throw new Error('must be a comma-separated list of secrets of at least 16 characters each');
      }
    },
    coerce: (value: unknown) => splitList(value),
  },
  // Former JWT secrets still verify tokens, so a weak one is as good as a weak JWT_SECRET to a forger.
  'jwt-secret-list': {
    validate(value: unknown) {
      if (value === null) return;
      if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.length < 32)) {
        throw new Error('must be a comma-separated list of secrets of at least 32 characters each, as strong as JWT_SECRET');
      }
    },
    coerce: (value: unknown) => splitList(value),
  },
  secret: {
    validate(value: unknown) {
      if (value === null) return;
      if (typeof value !== 'string' || value.length < 32) {
        throw new Error('must be a secret of at least 32 characters');
      }
    },
  },
  'jwt-algorithms': {
    validate(value: unknown) {
      if (!Array.isArray(value) || value.length === 0) throw new Error('must list at least one algorithm');
      for (const a of value as unknown[]) {
        if (!(SAFE_ALGORITHMS as readonly unknown[]).includes(a)) {
          throw new Error(`unsupported algorithm "${String(a)}"; allowed: ${SAFE_ALGORITHMS.join(', ')}`);
        }
      }
    },
    coerce: (value: unknown) => splitList(value),
  },
  // convict's Boolean turns any string but "false" into true; a typo must fail instead.
  'strict-boolean': {
    validate(value: unknown) {
      if (typeof value !== 'boolean') throw new Error('must be true or false');
    },
    coerce(value: unknown) {
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      return value;
    },
  },
  duration: {
    validate(value: unknown) {
      if (typeof value !== 'string' || !DURATION.test(value)) {
        throw new Error('must look like 15m, 1h, 7d (a number 1–99999 followed by s, m, h or d)');
      }
    },
  },
  'optional-string': {
    validate(value: unknown) {
      if (value !== null && (typeof value !== 'string' || value.length === 0)) {
        throw new Error('must be a non-empty string when set');
      }
    },
  },
  'public-url': {
    validate(value: unknown) {
      if (value === null) return;
      let url: URL | undefined;
      try {
        url = typeof value === 'string' ? new URL(value) : undefined;
      } catch {
        url = undefined;
      }
      if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username || url.password) {
        throw new Error('must be an http:// or https:// URL with an optional path prefix (no query, fragment or credentials)');
      }
    },
    coerce: (value: unknown) => (typeof value === 'string' ? value.replace(/\/+$/, '') : value),
  },
  'redis-url': {
    validate(value: unknown) {
      if (value === null) return;
      if (typeof value !== 'string' || !/^rediss?:\/\/.+/.test(value)) {
        throw new Error('must be a redis:// or rediss:// URL');
      }
    },
  },
  // host:port,host:port — IPv6 hosts in brackets ([::1]:26379).
  'redis-nodes': {
    validate(value: unknown) {
      if (value === null) return;
      if (!Array.isArray(value) || value.length === 0) throw new Error('must be a comma-separated list of host:port');
      for (const node of value as unknown[]) {
        if (typeof node !== 'string' || parseHostPort(node) === null) {
          throw new Error(`"${String(node)}" is not host:port (port 1–65535; IPv6 in brackets, e.g. [::1]:6379)`);
        }
      }
    },
    coerce: (value: unknown) => splitList(value),
  },
  'trust-proxy': {
    validate(value: unknown) {
      if (typeof value === 'boolean') return;
      if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return;
      if (typeof value === 'string' && value.length > 0) return;
      throw new Error('must be true, false, a hop count, or a comma-separated list of trusted addresses/subnets');
    },
    coerce(value: unknown) {
      if (value === 'true') return true;
      if (value === 'false') return false;
      if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
      return value;
    },
  },
});

/** `host:port` or `[v6]:port` → its parts, or null when malformed. */
export function parseHostPort(value: string): { host: string; port: number } | null {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(value);
  if (!match) return null;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return null;
  return { host: match[1] ?? match[2], port };
}

function splitList(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * Every setting of the hub. The environment variable of each key is the key itself. The table of
 * docs/configuration.md is generated from this object (`npm run docs`), and a test checks that it is
 * current and lists every key.
 */
export const configSchema = {
  NODE_ENV: {
    doc: 'Runtime environment. `production` requires every secret to be set and restricts CORS to CORS_ORIGINS.',
    format: ['production', 'development', 'test'],
    default: 'development',
    env: 'NODE_ENV',
  },
  PORT: {
    doc: 'TCP port the HTTP and Socket.IO server listens on (0 picks a free port).',
    format: 'port',
    default: 3000,
    env: 'PORT',
  },
  HOST: {
    doc: 'Interface to listen on.',
    format: String,
    default: '0.0.0.0',
    env: 'HOST',
  },
  REDIS_URL: {
    doc: 'One Redis server shared by all replicas (redis:// or rediss://, ACL user:password in the URL). At most one of REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES; none: single replica with in-memory state (lost on restart).',
    format: 'redis-url',
    default: null as string | null,
    env: 'REDIS_URL',
    sensitive: true,
  },
  REDIS_SENTINELS: {
    doc: 'Comma-separated host:port list of Redis Sentinels (with REDIS_SENTINEL_NAME): failover through Sentinel instead of REDIS_URL.',
    format: 'redis-nodes',
    default: null as string[] | null,
    env: 'REDIS_SENTINELS',
  },
  REDIS_SENTINEL_NAME: {
    doc: 'Name of the master the Sentinels watch (the `sentinel monitor` name); required with REDIS_SENTINELS.',
    format: 'optional-string',
    default: null as string | null,
    env: 'REDIS_SENTINEL_NAME',
  },
  REDIS_SENTINEL_PASSWORD: {
    doc: 'Password of the Sentinels themselves (requirepass of sentinel.conf), when they have one.',
    format: 'optional-string',
    default: null as string | null,
    env: 'REDIS_SENTINEL_PASSWORD',
    sensitive: true,
  },
  REDIS_CLUSTER_NODES: {
    doc: 'Comma-separated host:port list of some Redis Cluster nodes (the rest are discovered): sharded Redis instead of REDIS_URL.',
    format: 'redis-nodes',
    default: null as string[] | null,
    env: 'REDIS_CLUSTER_NODES',
  },
  REDIS_USERNAME: {
    doc: 'ACL user for the Redis servers behind REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL, put it in the URL).',
    format: 'optional-string',
    default: null as string | null,
    env: 'REDIS_USERNAME',
  },
  REDIS_PASSWORD: {
    doc: 'Password for the Redis servers behind REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL, put it in the URL).',
    format: 'optional-string',
    default: null as string | null,
    env: 'REDIS_PASSWORD',
    sensitive: true,
  },
  REDIS_TLS: {
    doc: 'Connect with TLS to the Redis servers behind REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL, use rediss://).',
    format: 'strict-boolean',
    default: false,
    env: 'REDIS_TLS',
  },
  AGENT_API_KEYS: {
    doc: 'Comma-separated API keys accepted at the /ws/agent handshake (several for rotation). Generated outside production when unset and no REDIS_URL.',
    format: 'secret-list',
    default: null as string[] | null,
    env: 'AGENT_API_KEYS',
    sensitive: true,
  },
  AGENT_SHARED_KEYS_ENABLED: {
    doc: 'Whether the shared AGENT_API_KEYS are accepted at /ws/agent (they serve any bot). Set false to accept only managed keys with the agent:connect scope, each bound to its agentIds; AGENT_API_KEYS is then not required.',
    format: 'strict-boolean',
    default: true,
    env: 'AGENT_SHARED_KEYS_ENABLED',
  },
  JWT_SECRET: {
    doc: 'HMAC secret that signs and verifies client JWTs (≥ 32 chars). Generated outside production when unset and no REDIS_URL.',
    format: 'secret',
    default: null as string | null,
    env: 'JWT_SECRET',
    sensitive: true,
  },
  ADMIN_JWT_SECRET: {
    doc: 'HMAC secret of admin tokens (≥ 32 chars, different from JWT_SECRET), held by operators: the ADMIN REST routes (users, API keys, agents) accept only tokens it signed (`npm run token -- --admin`), so a backend holding JWT_SECRET cannot administer the hub. Required with NODE_ENV=production (the hub refuses to start without it); generated outside production when unset and no REDIS_URL; unset outside production with Redis turns the ADMIN REST routes off (403).',
    format: 'secret',
    default: null as string | null,
    env: 'ADMIN_JWT_SECRET',
    sensitive: true,
  },
  JWT_PREVIOUS_SECRETS: {
    doc: 'Comma-separated former JWT secrets still accepted for verification during rotation (never used to sign); each at least 32 characters, like JWT_SECRET.',
    format: 'jwt-secret-list',
    default: null as string[] | null,
    env: 'JWT_PREVIOUS_SECRETS',
    sensitive: true,
  },
  JWT_ALGORITHMS: {
    doc: 'Comma-separated JWT algorithms accepted (HS256, HS384, HS512). The first one signs.',
    format: 'jwt-algorithms',
    default: ['HS256'] as string[],
    env: 'JWT_ALGORITHMS',
  },
  JWT_ISSUER: {
    doc: 'Required `iss` claim when set; minted tokens carry it.',
    format: 'optional-string',
    default: null as string | null,
    env: 'JWT_ISSUER',
  },
  JWT_AUDIENCE: {
    doc: 'Required `aud` claim when set; minted tokens carry it.',
    format: 'optional-string',
    default: null as string | null,
    env: 'JWT_AUDIENCE',
  },
  JWT_CLOCK_TOLERANCE_S: {
    doc: 'Seconds of clock skew tolerated when checking `exp` and `nbf`.',
    format: 'nat',
    default: 5,
    env: 'JWT_CLOCK_TOLERANCE_S',
  },
  JWT_REQUIRE_EXP: {
    doc: 'Reject client tokens without an `exp` claim.',
    format: 'strict-boolean',
    default: true,
    env: 'JWT_REQUIRE_EXP',
  },
  MINT_MAX_EXPIRES_IN: {
    doc: 'Longest lifetime POST /auth/embed/token may mint, as <n>(s|m|h|d). The default keeps minted tokens within the lifetimes recommended for demos and dashboards; 30d and more behave as long-lived bearer credentials.',
    format: 'duration',
    default: '24h',
    env: 'MINT_MAX_EXPIRES_IN',
  },
  CORS_ORIGINS: {
    doc: 'Comma-separated origins allowed for REST CORS and at the /ws/client handshake; `*` allows any. Defaults to `*` outside production and to none in production.',
    format: 'comma-list',
    default: null as string[] | null,
    env: 'CORS_ORIGINS',
  },
  TRUST_PROXY: {
    doc: 'Express trust-proxy setting (false, true, hop count, or addresses); per-IP limits use the client address it yields.',
    format: 'trust-proxy',
    default: false as boolean | number | string,
    env: 'TRUST_PROXY',
  },
  LOG_LEVEL: {
    doc: 'pino log level.',
    format: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    env: 'LOG_LEVEL',
  },
  LOG_PERSONAL_DATA: {
    doc: "Whether the connect line ('handshake accepted') carries the client's email from its token (on by default, for operators who trace a user's sessions). No other line carries it; false drops it there too.",
    format: 'strict-boolean',
    default: true,
    env: 'LOG_PERSONAL_DATA',
  },
  OPENAPI_SPEC_FILE: {
    doc: 'Path the OpenAPI spec is written to on every start (a failed write is logged, not fatal).',
    format: String,
    default: 'openapi.json',
    env: 'OPENAPI_SPEC_FILE',
  },
  ASYNCAPI_SPEC_FILE: {
    doc: 'Path the AsyncAPI document of the relay protocol is written to on every start (a failed write is logged, not fatal).',
    format: String,
    default: 'asyncapi.json',
    env: 'ASYNCAPI_SPEC_FILE',
  },
  PUBLIC_URL: {
    doc: 'URL browsers and runtimes reach the hub at (origin plus an optional path prefix), named as the server of the AsyncAPI document. Unset: http://<HOST, or localhost for 0.0.0.0>:<PORT>.',
    format: 'public-url',
    default: null as string | null,
    env: 'PUBLIC_URL',
  },
  API_DOCS_ENABLED: {
    doc: 'Serve interactive docs at /api and the raw spec at /api-json, and the relay protocol at /asyncapi and /asyncapi.json.',
    format: 'strict-boolean',
    default: true,
    env: 'API_DOCS_ENABLED',
  },
  DEMO_ENABLED: {
    doc: 'Serve the demo chat page at / with a built-in echo agent and a development token route. Never active in production.',
    format: 'strict-boolean',
    default: true,
    env: 'DEMO_ENABLED',
  },
  MAX_MESSAGE_BYTES: {
    doc: 'Largest relayed message (UTF-8 bytes of text, and of the whole payload). Socket.IO frames are capped at twice this.',
    format: 'nat',
    default: 65536,
    env: 'MAX_MESSAGE_BYTES',
  },
  AGENT_ACK_TIMEOUT_MS: {
    doc: 'How long the hub waits for an agent runtime to acknowledge a client message before acking TIMEOUT.',
    format: 'nat',
    default: 10000,
    env: 'AGENT_ACK_TIMEOUT_MS',
  },
  DEDUPE_WINDOW_S: {
    doc: 'Seconds a (agentId, sub, clientMessageId) record is kept to drop retried client messages.',
    format: 'nat',
    default: 600,
    env: 'DEDUPE_WINDOW_S',
  },
  MESSAGE_RATE_PER_S: {
    doc: 'Sustained events per second one client socket may send (token bucket refill rate; 0 = unlimited); excess gets RATE_LIMITED.',
    format: 'nat',
    default: 20,
    env: 'MESSAGE_RATE_PER_S',
  },
  MESSAGE_RATE_BURST: {
    doc: 'Token bucket size for client socket events; a socket refused this many times in a row is disconnected with RATE_LIMITED.',
    format: 'nat',
    default: 40,
    env: 'MESSAGE_RATE_BURST',
  },
  USER_MESSAGE_RATE_PER_S: {
    doc: 'Sustained messages per second one user (token sub) may send to one bot over all their sockets on every replica (token bucket refill rate, shared through Redis when configured; 0 = unlimited); excess gets RATE_LIMITED and is neither delivered nor logged. Twice MESSAGE_RATE_PER_S by default: a user with a few tabs is not held back, one with many sockets cannot multiply what the bot is sent.',
    format: 'nat',
    default: 40,
    env: 'USER_MESSAGE_RATE_PER_S',
  },
  USER_MESSAGE_RATE_BURST: {
    doc: 'Token bucket size of USER_MESSAGE_RATE_PER_S: messages one user may send to one bot at once.',
    format: 'nat',
    default: 80,
    env: 'USER_MESSAGE_RATE_BURST',
  },
  AGENT_MESSAGE_RATE_PER_S: {
    doc: 'Sustained events per second one agent runtime socket may send (0 = unlimited); excess gets RATE_LIMITED.',
    format: 'nat',
    default: 2000,
    env: 'AGENT_MESSAGE_RATE_PER_S',
  },
  AGENT_MESSAGE_RATE_BURST: {
    doc: 'Token bucket size for agent runtime socket events; refused this many times in a row disconnects the runtime.',
    format: 'nat',
    default: 4000,
    env: 'AGENT_MESSAGE_RATE_BURST',
  },
  AGENT_DELIVERY_RATE_PER_S: {
    doc: "Sustained deliveries per second one bot may cause on one replica (token bucket refill rate; 0 = unlimited): a reply costs one per socket it reaches, a '*' broadcast one per client socket of the bot (on every replica, as presence counts them). Past it the bot's reply gets RATE_LIMITED (REST publish: 429) and nothing is logged or sent, so one bot's broadcasts cannot take a replica from other bots' users. About a twentieth of what one replica delivers on 2 cores (~100,000 a second); see docs/operations.md (per-bot delivery budget).",
    format: 'nat',
    default: 5000,
    env: 'AGENT_DELIVERY_RATE_PER_S',
  },
  AGENT_DELIVERY_RATE_BURST: {
    doc: "Token bucket size of AGENT_DELIVERY_RATE_PER_S: deliveries one bot may cause at once on one replica. Small, as deliveries at once are a stall for everyone else on the replica; a publish that costs more than the bucket holds (a broadcast to more clients) still goes while the bucket is not empty, and the bot's next ones wait the debt out.",
    format: 'nat',
    default: 1000,
    env: 'AGENT_DELIVERY_RATE_BURST',
  },
  MAX_RUNTIMES_PER_AGENT: {
    doc: 'Runtimes one bot may have connected at once over all replicas (0 = unlimited); one more is refused at the /ws/agent handshake with AGENT_RUNTIME_LIMIT (retryable: a runtime that leaves makes room, as in a rolling restart). Every client message reads and scores all runtimes of its bot.',
    format: 'nat',
    default: 50,
    env: 'MAX_RUNTIMES_PER_AGENT',
  },
  HANDSHAKE_FAILURES_PER_MIN: {
    doc: 'Failed authentications (refused handshakes and REST 401s; not Origin refusals) allowed per client IP per minute, and again per IP and verified identity (token sub, API key). Past the IP budget, credentials that do not verify get RATE_LIMITED or 429; verified ones still get in unless their own identity is past its budget (shared through Redis when configured; 0 = unlimited).',
    format: 'nat',
    default: 30,
    env: 'HANDSHAKE_FAILURES_PER_MIN',
  },
  DEACTIVATION_RECHECK_S: {
    doc: 'Every this many seconds each replica re-checks the users of its live client sessions against the deactivations and closes those of deactivated users, so a session that missed the deactivation broadcast still ends (0 = off; auth:refresh checks regardless).',
    format: 'nat',
    default: 60,
    env: 'DEACTIVATION_RECHECK_S',
  },
  MAX_CONNECTIONS_PER_IP: {
    doc: 'Concurrent connections per client IP on one replica, counted twice: engine connections (refused before the websocket upgrade) and namespace sockets, however many share one connection (refused at their handshake) (0 = unlimited).',
    format: 'nat',
    default: 1000,
    env: 'MAX_CONNECTIONS_PER_IP',
  },
  MAX_CONNECTIONS: {
    doc: 'Concurrent connections per replica, counted like MAX_CONNECTIONS_PER_IP: engine connections and namespace sockets (0 = unlimited).',
    format: 'nat',
    default: 20000,
    env: 'MAX_CONNECTIONS',
  },
  CONNECT_TIMEOUT_MS: {
    doc: 'A connection with no accepted namespace this long after it opened, or after its last namespace left, is closed.',
    format: 'nat',
    default: 10000,
    env: 'CONNECT_TIMEOUT_MS',
  },
  MAX_SOCKET_BUFFER_BYTES: {
    doc: 'Bytes the hub may hold queued for one peer (a socket that stops reading): past it the hub closes that transport and the client recovers from the conversation log on reconnect (lastMessageId). History replies count against it: a page is cut to what still fits (0 = unlimited).',
    format: 'nat',
    default: 1048576,
    env: 'MAX_SOCKET_BUFFER_BYTES',
  },
  HISTORY_BYTES_PER_S: {
    doc: 'Sustained bytes of history pages per second one client socket may read (byte token bucket refill rate; 0 = unlimited); a page is cut to the budget left, and a request with none left gets RATE_LIMITED.',
    format: 'nat',
    default: 262144,
    env: 'HISTORY_BYTES_PER_S',
  },
  HISTORY_BYTES_BURST: {
    doc: 'Byte token bucket size for history pages per client socket (with HISTORY_BYTES_PER_S).',
    format: 'nat',
    default: 1048576,
    env: 'HISTORY_BYTES_BURST',
  },
  METRICS_TOKEN: {
    doc: 'When set (≥ 32 chars), /metrics answers only requests with `Authorization: Bearer <METRICS_TOKEN>` (else 401). Set it wherever /metrics is reachable from outside, e.g. behind an Ingress.',
    format: 'secret',
    default: null as string | null,
    env: 'METRICS_TOKEN',
    sensitive: true,
  },
  REST_BODY_LIMIT_BYTES: {
    doc: 'Largest accepted REST request body; larger bodies get 413.',
    format: 'nat',
    default: 131072,
    env: 'REST_BODY_LIMIT_BYTES',
  },
  PRESENCE_TTL_S: {
    doc: "Lifetime of a replica's presence entries in Redis; the replica refreshes them every third of it, so a dead replica's entries expire.",
    format: 'nat',
    default: 30,
    env: 'PRESENCE_TTL_S',
  },
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
  RECOVERY_MAX_MESSAGES: {
    doc: 'Most messages replayed to a reconnecting client (lastMessageId); when more are missing nothing is replayed and session.recovered is false.',
    format: 'positive-int',
    default: 200,
    env: 'RECOVERY_MAX_MESSAGES',
  },
  AGENT_RECONNECT_GRACE_MS: {
    doc: 'After the last runtime of a bot leaves, client messages wait this long for a runtime to connect (on any replica) before AGENT_OFFLINE, and agent:status offline is announced only when it ends (0 = no grace).',
    format: 'nat',
    default: 15000,
    env: 'AGENT_RECONNECT_GRACE_MS',
  },
  STREAM_MAX_BYTES: {
    doc: 'Largest accumulated text of a streamed reply, in UTF-8 bytes; a stream:delta beyond it gets PAYLOAD_TOO_LARGE and changes nothing.',
    format: 'positive-int',
    default: 262144,
    env: 'STREAM_MAX_BYTES',
  },
  STREAM_MAX_OPEN: {
    doc: 'Most streams one runtime socket may have open at once; stream:start beyond it gets STREAM_LIMIT.',
    format: 'positive-int',
    default: 100,
    env: 'STREAM_MAX_OPEN',
  },
  STREAM_IDLE_TIMEOUT_MS: {
    doc: 'A stream with no delta for this long is ended by the hub with status timeout (also how a stream whose replica died is closed).',
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
    format: 'nat',
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
  SHUTDOWN_GRACE_MS: {
    doc: 'On SIGTERM, the time over which connections are closed in batches before the process exits.',
    format: 'nat',
    default: 20000,
    env: 'SHUTDOWN_GRACE_MS',
  },
};

export type ConfigSchema = typeof configSchema;
