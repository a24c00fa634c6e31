import { randomBytes } from 'node:crypto';
import convict from 'convict';
import { configSchema, type ConfigSchema } from './config.schema';
import { redisTopology, type RedisTopology } from './redis-topology';

/** A value as loaded: arrays frozen. */
type Frozen<T> = T extends readonly (infer U)[] ? readonly U[] : T;

/** Each key of the schema with the type of its `default` (what convict yields for it). */
export type SchemaValues = { readonly [K in keyof ConfigSchema]: Frozen<ConfigSchema[K]['default']> };

/**
 * Keys whose unset (null) default {@link loadConfig} always replaces: generated or required secrets
 * and lists that default to empty. Each must be a narrowing of its schema type, which the compiler
 * checks here.
 */
type Filled = CheckedAgainstSchema<{
  JWT_SECRET: string;
  AGENT_API_KEYS: readonly string[];
  JWT_PREVIOUS_SECRETS: readonly string[];
  CORS_ORIGINS: readonly string[];
}>;
type CheckedAgainstSchema<T extends { [K in keyof T]: K extends keyof SchemaValues ? NonNullable<SchemaValues[K]> : never }> = T;

/**
 * The validated, frozen configuration every component reads. Keys match the environment variables.
 * Derived from the schema (src/config/schema/), so a key and its type are written once.
 */
export type HubConfig = Omit<SchemaValues, keyof Filled> & { readonly [K in keyof Filled]: Filled[K] };

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
  if ((raw.MEMORY_HIGH_WATER_RATIO as number) > 0 && (raw.MEMORY_LOW_WATER_RATIO as number) >= (raw.MEMORY_HIGH_WATER_RATIO as number)) {
    throw new ConfigError('MEMORY_LOW_WATER_RATIO must be below MEMORY_HIGH_WATER_RATIO (or MEMORY_HIGH_WATER_RATIO 0, off)');
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

/**
 * Every key's schema default, for code that may run without a loaded config (a store built by a
 * test or a tool): the defaults are written in the schema only.
 */
export function schemaDefaults(): SchemaValues {
  return Object.fromEntries(Object.entries(configSchema).map(([key, entry]) => [key, entry.default])) as unknown as SchemaValues;
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
