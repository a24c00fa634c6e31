import { randomBytes } from 'node:crypto';
import convict from 'convict';
import { configSchema } from './config.schema';
import { redisTopology, type RedisSettings, type RedisTopology } from './redis-topology';

/** The validated, frozen configuration every component reads. Keys match the environment variables. */
export interface HubConfig extends RedisSettings {
  readonly NODE_ENV: 'production' | 'development' | 'test';
  readonly PORT: number;
  readonly HOST: string;
  readonly AGENT_API_KEYS: readonly string[];
  readonly AGENT_SHARED_KEYS_ENABLED: boolean;
  readonly JWT_SECRET: string;
  readonly ADMIN_JWT_SECRET: string | null;
  readonly JWT_PREVIOUS_SECRETS: readonly string[];
  readonly JWT_ALGORITHMS: readonly ('HS256' | 'HS384' | 'HS512')[];
  readonly JWT_ISSUER: string | null;
  readonly JWT_AUDIENCE: string | null;
  readonly JWT_CLOCK_TOLERANCE_S: number;
  readonly JWT_REQUIRE_EXP: boolean;
  readonly MINT_MAX_EXPIRES_IN: string;
  readonly CORS_ORIGINS: readonly string[];
  readonly TRUST_PROXY: boolean | number | string;
  readonly LOG_LEVEL: string;
  readonly LOG_PERSONAL_DATA: boolean;
  readonly OPENAPI_SPEC_FILE: string;
  readonly ASYNCAPI_SPEC_FILE: string;
  readonly PUBLIC_URL: string | null;
  readonly API_DOCS_ENABLED: boolean;
  readonly DEMO_ENABLED: boolean;
  readonly MAX_MESSAGE_BYTES: number;
  readonly AGENT_ACK_TIMEOUT_MS: number;
  readonly DEDUPE_WINDOW_S: number;
  readonly MESSAGE_RATE_PER_S: number;
  readonly MESSAGE_RATE_BURST: number;
  readonly USER_MESSAGE_RATE_PER_S: number;
  readonly USER_MESSAGE_RATE_BURST: number;
  readonly AGENT_MESSAGE_RATE_PER_S: number;
  readonly AGENT_MESSAGE_RATE_BURST: number;
  readonly AGENT_DELIVERY_RATE_PER_S: number;
  readonly AGENT_DELIVERY_RATE_BURST: number;
  readonly MAX_RUNTIMES_PER_AGENT: number;
  readonly HANDSHAKE_FAILURES_PER_MIN: number;
  readonly DEACTIVATION_RECHECK_S: number;
  readonly MAX_CONNECTIONS_PER_IP: number;
  readonly MAX_CONNECTIONS: number;
  readonly CONNECT_TIMEOUT_MS: number;
  readonly MAX_SOCKET_BUFFER_BYTES: number;
  readonly HISTORY_BYTES_PER_S: number;
  readonly HISTORY_BYTES_BURST: number;
  readonly METRICS_TOKEN: string | null;
  readonly REST_BODY_LIMIT_BYTES: number;
  readonly PRESENCE_TTL_S: number;
  readonly SHUTDOWN_GRACE_MS: number;
  readonly HISTORY_ENABLED: boolean;
  readonly HISTORY_MAX_MESSAGES: number;
  readonly HISTORY_TTL_S: number;
  readonly HISTORY_MEMORY_MAX_CONVERSATIONS: number;
  readonly HISTORY_MEMORY_MAX_MESSAGES: number;
  readonly HISTORY_MEMORY_MAX_BYTES: number;
  readonly RECOVERY_MAX_MESSAGES: number;
  readonly AGENT_RECONNECT_GRACE_MS: number;
  readonly STREAM_MAX_BYTES: number;
  readonly STREAM_MAX_OPEN: number;
  readonly STREAM_IDLE_TIMEOUT_MS: number;
  readonly STREAM_MAX_DURATION_MS: number;
  readonly STREAM_STOP_GRACE_MS: number;
  readonly STREAM_DELTA_RATE_PER_S: number;
  readonly STREAM_DELTA_RATE_BURST: number;
  readonly ACTIVITY_TTL_MS: number;
}

export type ConfigKey = keyof HubConfig;

/** Thrown for a setting that is missing or invalid; the message always names the key. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Secrets that were generated because they were unset (development only), to be printed once. */
export interface GeneratedSecrets {
  JWT_SECRET?: string;
  ADMIN_JWT_SECRET?: string;
  AGENT_API_KEYS?: string;
}

export interface LoadedConfig {
  config: HubConfig;
  generated: GeneratedSecrets;
}

/**
 * Validates `env` (default `process.env`) against the schema. Throws {@link ConfigError} naming the
 * offending key. Outside production and without REDIS_URL, missing secrets are generated.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const schemaEnv: Record<string, string> = {};
  for (const key of Object.keys(configSchema)) {
    const value = env[key];
    // An empty variable means "unset": docker-compose and helm often pass FOO="".
    if (value !== undefined && value !== '') schemaEnv[key] = value;
  }
  const conf = convict(configSchema, { env: schemaEnv, args: [] });
  try {
    conf.validate({ allowed: 'strict' });
  } catch (err) {
    throw new ConfigError(`Invalid configuration: ${(err as Error).message}`);
  }
  const raw = conf.getProperties() as Record<string, unknown>;
  const production = raw.NODE_ENV === 'production';
  const topology = redisTopology(raw as unknown as HubConfig);
  if (topology !== null && 'error' in topology) throw new ConfigError(`Invalid configuration: ${topology.error}`);
  const mayGenerate = !production && topology === null;
  const generated: GeneratedSecrets = {};

  if (raw.JWT_SECRET === null) {
    if (!mayGenerate) throw new ConfigError(missingSecretMessage('JWT_SECRET', production));
    raw.JWT_SECRET = generated.JWT_SECRET = randomBytes(32).toString('base64url');
  }
  if (raw.AGENT_API_KEYS === null && raw.AGENT_SHARED_KEYS_ENABLED === false) raw.AGENT_API_KEYS = [];
  if (raw.AGENT_API_KEYS === null) {
    if (!mayGenerate) throw new ConfigError(missingSecretMessage('AGENT_API_KEYS', production));
    generated.AGENT_API_KEYS = `ak_${randomBytes(24).toString('base64url')}`;
    raw.AGENT_API_KEYS = [generated.AGENT_API_KEYS];
  }
  raw.JWT_PREVIOUS_SECRETS ??= [];
  if (raw.ADMIN_JWT_SECRET === null && mayGenerate) {
    raw.ADMIN_JWT_SECRET = generated.ADMIN_JWT_SECRET = randomBytes(32).toString('base64url');
  }
  // A production hub without it would start with its ADMIN REST routes off, which an operator
  // finds out only when the first admin call gets 403.
  if (raw.ADMIN_JWT_SECRET === null && production) throw new ConfigError(missingSecretMessage('ADMIN_JWT_SECRET', production));
  if (raw.ADMIN_JWT_SECRET !== null && [raw.JWT_SECRET, ...(raw.JWT_PREVIOUS_SECRETS as string[])].includes(raw.ADMIN_JWT_SECRET)) {
    throw new ConfigError(
      'ADMIN_JWT_SECRET must differ from JWT_SECRET and every JWT_PREVIOUS_SECRETS entry (whoever signs chat tokens must not sign admin tokens)',
    );
  }
  raw.CORS_ORIGINS ??= production ? [] : ['*'];
  if (production && raw.DEMO_ENABLED === true && env.DEMO_ENABLED !== undefined && env.DEMO_ENABLED !== '') {
    throw new ConfigError('DEMO_ENABLED: the demo (with its unauthenticated token route) cannot run with NODE_ENV=production');
  }
  if (production) raw.DEMO_ENABLED = false;

  return { config: deepFreeze(raw) as unknown as HubConfig, generated };
}

/** The Redis topology of a loaded config (validated by {@link loadConfig}), or null for none. */
export function redisTopologyOf(config: HubConfig): RedisTopology | null {
  const topology = redisTopology(config);
  if (topology !== null && 'error' in topology) throw new ConfigError(topology.error);
  return topology;
}

/** Builds a config for tests and tools: schema defaults, then `overrides`. */
export function configFrom(overrides: Partial<Record<ConfigKey, string>>): HubConfig {
  return loadConfig(overrides).config;
}

function missingSecretMessage(key: string, production: boolean): string {
  const why = production ? 'NODE_ENV=production' : 'Redis is configured (all replicas must share it)';
  return `${key} is required when ${why}; set the ${key} environment variable`;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
