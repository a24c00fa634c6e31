import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Server } from 'socket.io';
import type { RuntimeDeliveries, RuntimeDispatcher } from '../relay/dispatcher';
import type { RelayNamespaces } from '../relay/relay.context';
import { Cluster } from 'ioredis';
import { redisTopologyOf, type HubConfig } from '../config/config';
import type { RedisTopology } from '../config/redis-topology';
import type { Logger } from '../logging/logger';
import type { HubMetrics } from '../metrics/metrics';
import { migrateLegacyKeys } from '../store/redis/legacy-keys';
import { RedisStore } from '../store/redis/redis.store';
import { ClusterDispatcher } from './cluster.dispatcher';
import type { AgentStatusListener, ClusterOptions, Infrastructure } from './infrastructure';
import { PresenceKeeper } from './presence-keeper';
import { channelPerShard } from './cluster-slots';
import { PubSubCanary } from './pubsub-canary';
import {
  createRedisConnections,
  guardCommands,
  quitConnection,
  redisErrorReporter,
  whenReady,
  type RedisClient,
  type RedisErrorReporter,
} from './redis-connections';
import { bySlot, ShardedChannels } from './sharded-channels';
import { SubscriptionRecovery } from './subscription-recovery';
import { canaryRoundTrip, countPubSubMessages, followSubscriber } from './redis-pubsub';
import { adapterChannels, installAdapter, roomChannelNamer } from './socket-adapter';
import { RoomFrames } from './frames';
import { quotaOf } from '../store/bot-quota';

const CANARY_INTERVAL_MS = 1000;
const STARTUP_WAIT_MS = 5000;
/** Between attempts to restore lost subscriptions (one can fail while a shard has no master yet). */
const RESUBSCRIBE_RETRY_MS = 500;
const RESUBSCRIBE_TIMEOUT_MS = 5000;

/**
 * Cluster mode: Redis store, Socket.IO Redis adapter, point-to-point dispatcher, pub/sub canary
 * and presence refresh, over two connections per replica (commands + publishes, subscriptions).
 * Connects (waiting up to STARTUP_WAIT_MS: an unreachable Redis starts the replica unready, not
 * failed), renames the first release's keys, and hands the rest to {@link RedisInfrastructure}.
 */
export async function createRedisInfrastructure(
  config: HubConfig,
  logger: Logger,
  metrics: HubMetrics,
  options: ClusterOptions = {},
): Promise<Infrastructure> {
  const topology = redisTopologyOf(config) as RedisTopology;
  const prefix = options.keyPrefix ?? 'relay:';
  const replicaId = `${hostname()}-${randomBytes(4).toString('hex')}`;
  const report = redisErrorReporter(logger, metrics);
  const { command: pub, subscriber: sub } = createRedisConnections(topology, `relay-hub:${replicaId}`);
  for (const [client, component] of [
    [pub, 'redis-command'],
    [sub, 'redis-subscriber'],
  ] as const) {
    client.on('error', (err: unknown) => report(component, err, 'Redis connection error'));
    if (client instanceof Cluster) client.on('node error', (err: unknown) => report(component, err, 'Redis Cluster node error'));
  }
  guardCommands(pub, ['publish'], (_command, err) => report('adapter', err, 'adapter publish failed'));
  guardCommands(sub, ['subscribe', 'psubscribe', 'ssubscribe', 'unsubscribe', 'punsubscribe', 'sunsubscribe'], (command, err) =>
    report('redis-subscriber', err, `${command} failed; restored when Redis is back`),
  );
  const names = channelNames(prefix, replicaId);
  countPubSubMessages(sub, metrics, (name) =>
    name.startsWith(names.dispatch.before) ? 'dispatch' : name.startsWith(names.canary) ? 'canary' : 'adapter',
  );

  const [pubReady, subReady] = await Promise.all([whenReady(pub, STARTUP_WAIT_MS), whenReady(sub, STARTUP_WAIT_MS)]);
  if (!pubReady || !subReady) logger.warn({ topology: topology.kind }, 'Redis not reachable yet; starting unready and retrying');
  if (pubReady && topology.kind !== 'cluster') {
    const renamed = await migrateLegacyKeys(pub, prefix).catch((err: unknown) => {
      report('redis-command', err, 'renaming keys of the first release failed; retried at the next start');
      return [];
    });
    if (renamed.length > 0) logger.warn({ renamed }, 'renamed Redis keys of the first release to their hash-tagged names');
  }
  return new RedisInfrastructure(
    { config, logger, metrics, options, topology, prefix, replicaId, report, pub, sub, names },
    pubReady,
    subReady,
  );
}

/** The channels of one replica: its delivery requests' (a template around a replica id) and its canary's. */
function channelNames(prefix: string, replicaId: string) {
  return { dispatch: { before: `${prefix}dispatch#`, after: '#' }, canary: `${prefix}canary#${replicaId}#` };
}

/** What {@link createRedisInfrastructure} made and read before the replica's parts are built. */
interface RedisSetup {
  config: HubConfig;
  logger: Logger;
  metrics: HubMetrics;
  options: ClusterOptions;
  topology: RedisTopology;
  prefix: string;
  replicaId: string;
  report: RedisErrorReporter;
  /** Commands and publishes. */
  pub: RedisClient;
  /** Subscriptions. */
  sub: RedisClient;
  names: ReturnType<typeof channelNames>;
}

/** One replica's shared state and cross-replica delivery over Redis (see {@link Infrastructure}). */
class RedisInfrastructure implements Infrastructure {
  readonly store: RedisStore;
  readonly replicaId: string;
  readonly clustered = true;
  readonly frames = new RoomFrames();
  readonly subscriptions: Infrastructure['subscriptions'];
  private readonly channels: ShardedChannels;
  private readonly recovery: SubscriptionRecovery;
  private readonly canary: PubSubCanary;
  private io: Server | undefined;
  private keeper: PresenceKeeper | undefined;
  private roomChannelOf: ((room: string) => string | null) | null = null;
  private closing = false;

  constructor(
    private readonly setup: RedisSetup,
    pubReady: boolean,
    subReady: boolean,
  ) {
    const { config, logger, metrics, prefix, replicaId, report, pub, sub } = setup;
    this.replicaId = replicaId;
    this.store = new RedisStore(pub, {
      prefix,
      presenceTtlS: config.PRESENCE_TTL_S,
      history: { maxMessages: config.HISTORY_MAX_MESSAGES, ttlS: config.HISTORY_TTL_S },
      quota: quotaOf(config),
      onIndexFailure: (err) =>
        report(
          'conversation-index',
          err,
          "could not add a conversation to its user's index (retried at its next message; deleteUser misses it until then)",
        ),
    });
    this.channels = new ShardedChannels(sub);
    this.recovery = new SubscriptionRecovery(
      {
        resubscribe: () => this.resubscribe(),
        connected: () => sub.status === 'ready',
        logger,
        metrics,
        retryMs: RESUBSCRIBE_RETRY_MS,
        attemptTimeoutMs: RESUBSCRIBE_TIMEOUT_MS,
        restored: () => this.canary.forget(),
      },
      subReady,
    );
    this.subscriptions = { intact: () => this.recovery.intact(), onGap: (listener) => this.recovery.onGap(listener) };
    this.canary = new PubSubCanary(
      pub,
      sub,
      this.channels,
      () => channelPerShard(pub, setup.names.canary),
      () => {
        // Both connections up and yet the probes are lost: whatever else was published is lost too.
        this.recovery.lose('canary');
        this.recovery.reconnected();
      },
      report,
      {
        intervalMs: CANARY_INTERVAL_MS,
        staleAfterMs: 3 * CANARY_INTERVAL_MS,
        resubscribeAfterMisses: 3,
        onRoundTrip: canaryRoundTrip(metrics),
      },
    );

    // After an outage: restore subscriptions made while Redis was away, and re-register presence.
    followSubscriber(sub, this.recovery, logger, subReady, () => this.closing);
    let pubWasReady = pubReady;
    pub.on('ready', () => {
      if (pubWasReady) logger.warn('Redis reconnected; re-registering presence');
      pubWasReady = true;
      void this.keeper?.refresh();
    });
  }

  attach(server: Server): void {
    const { options, pub, sub, prefix, report } = this.setup;
    this.io = server;
    if (options.adapter) options.adapter(server, pub, sub, `${prefix}sio`);
    else installAdapter(server, pub, sub, `${prefix}sio`, report);
  }

  roomChannel(room: string): string | null {
    return this.roomChannelOf === null ? null : this.roomChannelOf(room);
  }

  bind(namespaces: RelayNamespaces, deliveries: RuntimeDeliveries, announce: AgentStatusListener): RuntimeDispatcher {
    const { config, options, topology, replicaId, report, pub, names } = this.setup;
    // On a Cluster a room's channel lives on another shard than the bot's keys: not countable there.
    // Nor can a script publish on that shard after writing the bot's keys.
    if (topology.kind !== 'cluster') {
      this.roomChannelOf = roomChannelNamer(namespaces.client);
      this.frames.frame(namespaces.client);
    }
    this.keeper = new PresenceKeeper(this.store.presence, namespaces, announce, replicaId, (config.PRESENCE_TTL_S * 1000) / 3, report);
    if (options.dispatcher) return options.dispatcher(replicaId, namespaces.agent, deliveries);
    const handoff = topology.kind !== 'cluster';
    return new ClusterDispatcher(replicaId, namespaces.agent, deliveries, pub, this.channels, names.dispatch, report, handoff);
  }

  start(): void {
    this.keeper?.start();
    this.canary.start();
  }

  stop(): void {
    this.canary.stop();
    this.keeper?.stop();
  }

  // Commands on one connection run in order: a PING answered means the SSUBSCRIBEs sent before it are done.
  async subscriptionsSettled(): Promise<void> {
    await this.setup.sub.ping();
  }

  async readinessChecks(): Promise<Record<string, boolean>> {
    return { redisPubSub: this.canary.healthy() };
  }

  async close(): Promise<void> {
    this.closing = true;
    this.recovery.close();
    this.canary.stop();
    this.keeper?.stop();
    await this.channels.unsubscribeAll();
    await Promise.all([quitConnection(this.setup.pub), quitConnection(this.setup.sub)]);
  }

  /**
   * Subscribes again to every channel this replica holds. Commands on one connection run in order:
   * the PING answered means every SSUBSCRIBE before it is done. On a Cluster each SSUBSCRIBE goes to
   * its shard's connection and resolves when done.
   */
  private async resubscribe(): Promise<void> {
    const { sub } = this.setup;
    const all = [...(this.io ? adapterChannels(this.io) : []), ...this.channels.channels()];
    await Promise.all(bySlot(sub, all).flatMap((group) => (group.length > 0 ? [sub.ssubscribe(...group)] : [])));
    if (!(sub instanceof Cluster)) await sub.ping();
  }
}
