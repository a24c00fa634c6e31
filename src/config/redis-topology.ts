import { parseHostPort } from './config.formats';
import type { SchemaValues } from './config';

export interface RedisNode {
  host: string;
  port: number;
}

/** Credentials and TLS for the servers behind Sentinel or Cluster (REDIS_URL carries its own). */
export interface RedisAuth {
  username?: string;
  password?: string;
  tls: boolean;
}

/** Which Redis the replicas share (docs/operations.md), derived from the configuration. */
export type RedisTopology =
  | { kind: 'single'; url: string }
  | { kind: 'sentinel'; sentinels: RedisNode[]; name: string; sentinelPassword?: string; auth: RedisAuth }
  | { kind: 'cluster'; nodes: RedisNode[]; auth: RedisAuth };

/** The configuration keys {@link redisTopology} reads. */
export type RedisSettings = Pick<
  SchemaValues,
  | 'REDIS_URL'
  | 'REDIS_SENTINELS'
  | 'REDIS_SENTINEL_NAME'
  | 'REDIS_SENTINEL_PASSWORD'
  | 'REDIS_CLUSTER_NODES'
  | 'REDIS_USERNAME'
  | 'REDIS_PASSWORD'
  | 'REDIS_TLS'
>;

const TOPOLOGY_KEYS = ['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] as const;

/**
 * The chosen topology, or null for none (in-memory, single replica). Returns an error message
 * naming the keys instead when the combination is not exactly one topology or is incomplete.
 */
export function redisTopology(settings: RedisSettings): RedisTopology | null | { error: string } {
  const set = TOPOLOGY_KEYS.filter((key) => settings[key] !== null);
  if (set.length > 1) {
    return { error: `${set.join(' and ')} are both set; choose one Redis topology: REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES` };
  }
  const sentinelOnly = (['REDIS_SENTINEL_NAME', 'REDIS_SENTINEL_PASSWORD'] as const).filter((key) => settings[key] !== null);
  if (settings.REDIS_SENTINELS === null && sentinelOnly.length > 0) {
    return { error: `${sentinelOnly.join(' and ')} ${sentinelOnly.length > 1 ? 'need' : 'needs'} REDIS_SENTINELS` };
  }
  const nodeAuth: string[] = (['REDIS_USERNAME', 'REDIS_PASSWORD'] as const).filter((key) => settings[key] !== null);
  if (settings.REDIS_TLS) nodeAuth.push('REDIS_TLS');
  if (set.length === 0 || set[0] === 'REDIS_URL') {
    if (nodeAuth.length > 0) {
      return {
        error: `${nodeAuth.join(', ')} apply to REDIS_SENTINELS or REDIS_CLUSTER_NODES; with REDIS_URL put credentials in the URL (rediss://user:password@host:port)`,
      };
    }
    return set.length === 0 ? null : { kind: 'single', url: settings.REDIS_URL as string };
  }
  const auth: RedisAuth = {
    ...(settings.REDIS_USERNAME !== null ? { username: settings.REDIS_USERNAME } : {}),
    ...(settings.REDIS_PASSWORD !== null ? { password: settings.REDIS_PASSWORD } : {}),
    tls: settings.REDIS_TLS,
  };
  if (set[0] === 'REDIS_SENTINELS') {
    if (settings.REDIS_SENTINEL_NAME === null)
      return { error: 'REDIS_SENTINELS needs REDIS_SENTINEL_NAME (the master name the Sentinels monitor)' };
    return {
      kind: 'sentinel',
      sentinels: nodes(settings.REDIS_SENTINELS as readonly string[]),
      name: settings.REDIS_SENTINEL_NAME,
      ...(settings.REDIS_SENTINEL_PASSWORD !== null ? { sentinelPassword: settings.REDIS_SENTINEL_PASSWORD } : {}),
      auth,
    };
  }
  return { kind: 'cluster', nodes: nodes(settings.REDIS_CLUSTER_NODES as readonly string[]), auth };
}

function nodes(list: readonly string[]): RedisNode[] {
  // The schema's redis-nodes format already rejected malformed entries.
  return list.map((entry) => parseHostPort(entry) as RedisNode);
}
