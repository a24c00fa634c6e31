import type { Server } from 'socket.io';
import type { HubConfig } from '../config/config';
import type { Logger } from '../logging/logger';
import type { HubMetrics } from '../metrics/metrics';
import { LocalDispatcher, type RuntimeDispatcher } from '../relay/dispatcher';
import type { RelayNamespaces } from '../relay/relay.context';
import { MemoryStore } from '../store/memory/memory.store';
import type { Store } from '../store/store';
import { createRedisInfrastructure } from './redis.infrastructure';
import type { AdapterKind } from './socket-adapter';

/**
 * Where shared state and cross-replica delivery come from: in memory for the embedded single
 * replica; Redis (adapter, store, presence, dispatcher, canary) when REDIS_URL is set.
 */
export interface Infrastructure {
  store: Store;
  /** This replica's id in presence entries. */
  replicaId: string;
  /** Installs the Socket.IO adapter, if any, before namespaces are created. */
  attach(io: Server): void;
  createDispatcher(namespaces: RelayNamespaces): RuntimeDispatcher;
  /** Named readiness checks (true = healthy), e.g. the Redis pub/sub canary. */
  readinessChecks(): Promise<Record<string, boolean>>;
  close(): Promise<void>;
}

/**
 * Knobs of cluster mode that are not configuration: the defaults are what production runs; the
 * alternatives exist so bench/adapter-fanout.mjs can measure them against each other.
 */
export interface ClusterOptions {
  /** Default `sharded`. */
  adapter?: AdapterKind;
  /** `direct` (default): point to point on the target replica's channel; `adapter-ack`: Socket.IO broadcast-with-ack. */
  dispatch?: 'direct' | 'adapter-ack';
  /** Prefix of every Redis key and channel (default `relay:`). */
  keyPrefix?: string;
}

export async function createInfrastructure(
  config: HubConfig,
  logger: Logger,
  metrics: HubMetrics,
  options: ClusterOptions = {},
): Promise<Infrastructure> {
  if (config.REDIS_URL) return createRedisInfrastructure(config, logger, metrics, options);
  const store = new MemoryStore();
  return {
    store,
    replicaId: 'local',
    attach: () => {},
    createDispatcher: (namespaces) => new LocalDispatcher(namespaces.agent),
    readinessChecks: async () => ({}),
    close: () => store.close(),
  };
}
