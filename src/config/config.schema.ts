import convict from 'convict';

const DURATION = /^[1-9]\d{0,4}[smhd]$/;
const SAFE_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;

convict.addFormats({
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
      for (const a of value) {
        if (!(SAFE_ALGORITHMS as readonly string[]).includes(a)) {
          throw new Error(`unsupported algorithm "${a}"; allowed: ${SAFE_ALGORITHMS.join(', ')}`);
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
  'redis-url': {
    validate(value: unknown) {
      if (value === null) return;
      if (typeof value !== 'string' || !/^rediss?:\/\/.+/.test(value)) {
        throw new Error('must be a redis:// or rediss:// URL');
      }
    },
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

function splitList(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * Every setting of the hub. The environment variable of each key is the key itself. README's
 * configuration table is generated from this object (`node scripts/config-table.mjs`), and a test
 * checks that it lists every key.
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
    doc: 'Redis URL shared by all replicas. Unset: single replica with in-memory state (lost on restart).',
    format: 'redis-url',
    default: null as string | null,
    env: 'REDIS_URL',
    sensitive: true,
  },
  AGENT_API_KEYS: {
    doc: 'Comma-separated API keys accepted at the /ws/agent handshake (several for rotation). Generated outside production when unset and no REDIS_URL.',
    format: 'secret-list',
    default: null as string[] | null,
    env: 'AGENT_API_KEYS',
    sensitive: true,
  },
  JWT_SECRET: {
    doc: 'HMAC secret that signs and verifies client JWTs (≥ 32 chars). Generated outside production when unset and no REDIS_URL.',
    format: 'secret',
    default: null as string | null,
    env: 'JWT_SECRET',
    sensitive: true,
  },
  JWT_PREVIOUS_SECRETS: {
    doc: 'Comma-separated former JWT secrets still accepted for verification during rotation (never used to sign).',
    format: 'secret-list',
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
    doc: 'Longest lifetime POST /auth/embed/token may mint, as <n>(s|m|h|d).',
    format: 'duration',
    default: '30d',
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
  OPENAPI_SPEC_FILE: {
    doc: 'Path the OpenAPI spec is written to on every start (a failed write is logged, not fatal).',
    format: String,
    default: 'openapi.json',
    env: 'OPENAPI_SPEC_FILE',
  },
  API_DOCS_ENABLED: {
    doc: 'Serve interactive docs at /api and the raw spec at /api-json.',
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
  HANDSHAKE_FAILURES_PER_MIN: {
    doc: 'Failed authentications (refused handshakes and REST 401s) allowed per client IP per minute before further attempts get RATE_LIMITED or 429 (shared through Redis when configured; 0 = unlimited).',
    format: 'nat',
    default: 30,
    env: 'HANDSHAKE_FAILURES_PER_MIN',
  },
  MAX_CONNECTIONS_PER_IP: {
    doc: 'Concurrent connections per client IP on one replica, refused before the websocket upgrade (0 = unlimited).',
    format: 'nat',
    default: 1000,
    env: 'MAX_CONNECTIONS_PER_IP',
  },
  MAX_CONNECTIONS: {
    doc: 'Concurrent connections per replica, refused before the websocket upgrade (0 = unlimited).',
    format: 'nat',
    default: 20000,
    env: 'MAX_CONNECTIONS',
  },
  CONNECT_TIMEOUT_MS: {
    doc: 'A connection that has not joined a namespace within this time is closed.',
    format: 'nat',
    default: 10000,
    env: 'CONNECT_TIMEOUT_MS',
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
    doc: 'Lifetime of a replica\'s presence entries in Redis; the replica refreshes them every third of it, so a dead replica\'s entries expire.',
    format: 'nat',
    default: 30,
    env: 'PRESENCE_TTL_S',
  },
  SHUTDOWN_GRACE_MS: {
    doc: 'On SIGTERM, the time over which connections are closed in batches before the process exits.',
    format: 'nat',
    default: 20000,
    env: 'SHUTDOWN_GRACE_MS',
  },
};

export type ConfigSchema = typeof configSchema;
