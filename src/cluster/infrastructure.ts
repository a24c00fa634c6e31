import type { Server } from 'socket.io';
import { redisTopologyOf, type HubConfig } from '../config/config';
import type { Logger } from '../logging/logger';
import type { HubMetrics } from '../metrics/metrics';
import type { RuntimeDeliveries, RuntimeDispatcher } from '../relay/dispatcher';
import type { RelayFrames, RelayNamespaces } from '../relay/relay.context';
import type { Store } from '../store/store';
import { createMemoryInfrastructure } from './memory.infrastructure';
import { createRedisInfrastructure } from './redis.infrastructure';
import type { AdapterInstaller } from './socket-adapter';
import type { Namespace } from 'socket.io';

/**
 * Where shared state and cross-replica delivery come from: in memory for the embedded single
 * replica; Redis (adapter, store, presence, dispatcher, canary) when a Redis topology is configured
 * (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES).
 */
export interface Infrastructure {
  store: Store;
  /** This replica's id in presence entries. */
  replicaId: string;
  /** True when rooms span replicas (a Redis adapter): this replica's view of a room is not all of it. */
  clustered: boolean;
  /** Installs the Socket.IO adapter, if any, before namespaces are created. */
  attach(io: Server): void;
  /**
   * The pub/sub shard channel that carries broadcasts to `room` of the client namespace between
   * replicas, when the store's scripts can count its subscribers (the sharded adapter on one Redis
   * server or Sentinel, where channels and keys share the server); null otherwise. Valid once
   * {@link Infrastructure.bind} has run.
   */
  roomChannel(room: string): string | null;
  /**
   * What the Socket.IO adapter would publish for the relay's broadcasts to rooms of the client
   * namespace, for the store to publish with the write that logs them (one Redis round trip instead
   * of two; frames.ts): on one Redis server or Sentinel with the sharded adapter; null otherwise, and
   * for rooms without a channel of their own. Valid once {@link Infrastructure.bind} has run.
   */
  frames: RelayFrames;
  /**
   * Builds how a client message reaches a runtime and, in a cluster, what keeps this replica's
   * presence fresh (telling `announce` when a bot's runtimes come back or all expire). Starts
   * nothing: see {@link Infrastructure.start}.
   */
  bind(namespaces: RelayNamespaces, deliveries: RuntimeDeliveries, announce: AgentStatusListener): RuntimeDispatcher;
  /** Starts timers and probes (presence refresh, pub/sub canary). */
  start(): void;
  /** Stops what {@link Infrastructure.start} started. */
  stop(): void;
  /** Resolves once the room subscriptions requested so far took effect (in Redis: a round trip on the subscriber). */
  subscriptionsSettled(): Promise<void>;
  /**
   * `intact()`: whether what other replicas publish to this replica's rooms reaches it; false from
   * the moment its subscriber connection drops (Redis restarted or failed over, the connection was
   * reset; on a Cluster also one shard's subscriber, or a subscribed slot moved to another master)
   * until every subscription is back (docs/operations.md, "Redis failover"). What was published in between never arrives, so
   * `onGap` listeners are told when the connection is back, before anything published after the
   * drop can reach a socket (and at once when the canary finds a subscription dead with both
   * connections up): the sessions open during the gap must end and replay from the log.
   */
  subscriptions: { intact(): boolean; onGap(listener: () => void): void };
  /** Named readiness checks (true = healthy), e.g. the Redis pub/sub canary. */
  readinessChecks(): Promise<Record<string, boolean>>;
  close(): Promise<void>;
}

/** Told when a bot goes from no runtime to some, or back, as seen by shared presence. */
export type AgentStatusListener = (agentId: string, online: boolean) => void;

/** Builds another way for a client message to reach a runtime on another replica. */
export type DispatcherFactory = (replicaId: string, agents: Namespace, deliveries: RuntimeDeliveries) => RuntimeDispatcher;

/**
 * Knobs of cluster mode that are not configuration: unset is what production runs. The hooks let
 * bench/ install the alternatives it measures (bench/adapter-variants.mjs) without their code
 * living here.
 */
export interface ClusterOptions {
  /** Another Socket.IO adapter instead of the sharded one. */
  adapter?: AdapterInstaller;
  /** Another dispatcher instead of point to point on the target replica's channel. */
  dispatcher?: DispatcherFactory;
  /** Prefix of every Redis key and channel (default `relay:`). */
  keyPrefix?: string;
}

/**
 * The infrastructure the configuration asks for: Redis when a topology is configured
 * (redis.infrastructure.ts), else the single replica's, in memory (memory.infrastructure.ts).
 */
export async function createInfrastructure(
  config: HubConfig,
  logger: Logger,
  metrics: HubMetrics,
  options: ClusterOptions = {},
): Promise<Infrastructure> {
  if (redisTopologyOf(config) !== null) return createRedisInfrastructure(config, logger, metrics, options);
  return createMemoryInfrastructure(config, metrics);
}
