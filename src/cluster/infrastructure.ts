import type { Server } from 'socket.io';
import { redisTopologyOf, type HubConfig } from '../config/config';
import type { Logger } from '../logging/logger';
import type { HubMetrics } from '../metrics/metrics';
import { LocalDispatcher, type RuntimeDeliveries, type RuntimeDispatcher } from '../relay/dispatcher';
import type { RelayNamespaces } from '../relay/relay.context';
import { MemoryStore } from '../store/memory/memory.store';
import type { Publication } from '../store/conversation-log';
import type { Store } from '../store/store';
import { createRedisInfrastructure } from './redis.infrastructure';
import type { AdapterInstaller } from './socket-adapter';
import type { Namespace } from 'socket.io';
import { quotaOf } from '../store/bot-quota';

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
   * What the Socket.IO adapter would publish for a broadcast of `event` to `room` of the client
   * namespace with a logged message as its data, for the conversation log to publish with its append (one Redis round trip instead of
   * two): on one Redis server or Sentinel with the sharded adapter; null otherwise, and for rooms
   * without a channel of their own. Valid once {@link Infrastructure.bind} has run.
   */
  publicationTo(room: string, event: string): Publication | null;
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

export async function createInfrastructure(
  config: HubConfig,
  logger: Logger,
  metrics: HubMetrics,
  options: ClusterOptions = {},
): Promise<Infrastructure> {
  if (redisTopologyOf(config) !== null) return createRedisInfrastructure(config, logger, metrics, options);
  const store = new MemoryStore({
    limits: { maxMessages: config.HISTORY_MAX_MESSAGES, ttlS: config.HISTORY_TTL_S },
    quota: quotaOf(config),
    bounds: {
      maxConversations: config.HISTORY_MEMORY_MAX_CONVERSATIONS,
      maxMessages: config.HISTORY_MEMORY_MAX_MESSAGES,
      maxBytes: config.HISTORY_MEMORY_MAX_BYTES,
    },
  });
  metrics.watchHistoryMemory(() => store.log.byteSize);
  return {
    store,
    replicaId: 'local',
    clustered: false,
    attach: () => {},
    roomChannel: () => null,
    publicationTo: () => null,
    bind: (namespaces, deliveries) => new LocalDispatcher(namespaces.agent, deliveries),
    start: () => {},
    stop: () => {},
    subscriptionsSettled: async () => {},
    subscriptions: { intact: () => true, onGap: () => {} },
    readinessChecks: async () => ({}),
    close: () => store.close(),
  };
}
