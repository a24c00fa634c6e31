import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Server } from 'socket.io';
import { Cluster } from 'ioredis';
import { redisTopologyOf, type HubConfig } from '../config/config';
import type { RedisTopology } from '../config/redis-topology';
import type { Logger } from '../logging/logger';
import type { HubMetrics } from '../metrics/metrics';
import { migrateLegacyKeys } from '../store/redis/legacy-keys';
import { RedisStore } from '../store/redis/redis.store';
import { ClusterDispatcher } from './cluster.dispatcher';
import type { ClusterOptions, Infrastructure } from './infrastructure';
import { PresenceKeeper } from './presence-keeper';
import { channelPerShard } from './cluster-slots';
import { PubSubCanary } from './pubsub-canary';
import { createRedisConnections, guardCommands, quitConnection, redisErrorReporter, whenReady } from './redis-connections';
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

  const dispatchChannel = { before: `${prefix}dispatch#`, after: '#' };
  const canaryChannel = `${prefix}canary#${replicaId}#`;
  countPubSubMessages(sub, metrics, (name) =>
    name.startsWith(dispatchChannel.before) ? 'dispatch' : name.startsWith(canaryChannel) ? 'canary' : 'adapter',
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

  const store = new RedisStore(pub, {
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
  const channels = new ShardedChannels(sub);
  let io: Server | undefined;
  let keeper: PresenceKeeper | undefined;
  let roomChannel: ((room: string) => string | null) | null = null;
  const frames = new RoomFrames();
  let closing = false;
  const recovery = new SubscriptionRecovery(
    {
      // Commands on one connection run in order: the PING answered means every SSUBSCRIBE before it
      // is done. On a Cluster each SSUBSCRIBE goes to its shard's connection and resolves when done.
      resubscribe: async () => {
        const all = [...(io ? adapterChannels(io) : []), ...channels.channels()];
        await Promise.all(bySlot(sub, all).flatMap((group) => (group.length > 0 ? [sub.ssubscribe(...group)] : [])));
        if (!(sub instanceof Cluster)) await sub.ping();
      },
      connected: () => sub.status === 'ready',
      logger,
      metrics,
      retryMs: RESUBSCRIBE_RETRY_MS,
      attemptTimeoutMs: RESUBSCRIBE_TIMEOUT_MS,
    },
    subReady,
  );
  const canary = new PubSubCanary(
    pub,
    sub,
    channels,
    () => channelPerShard(pub, canaryChannel),
    () => {
      // Both connections up and yet the probes are lost: whatever else was published is lost too.
      recovery.lose('canary');
      recovery.reconnected();
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
  followSubscriber(sub, recovery, logger, subReady, () => closing);
  let pubWasReady = pubReady;
  pub.on('ready', () => {
    if (pubWasReady) logger.warn('Redis reconnected; re-registering presence');
    pubWasReady = true;
    void keeper?.refresh();
  });

  return {
    store,
    replicaId,
    clustered: true,
    attach(server) {
      io = server;
      if (options.adapter) options.adapter(server, pub, sub, `${prefix}sio`);
      else installAdapter(server, pub, sub, `${prefix}sio`, report);
    },
    roomChannel: (room) => (roomChannel === null ? null : roomChannel(room)),
    frames,
    bind(namespaces, deliveries, announce) {
      // On a Cluster a room's channel lives on another shard than the bot's keys: not countable there.
      // Nor can a script publish on that shard after writing the bot's keys.
      if (topology.kind !== 'cluster') {
        roomChannel = roomChannelNamer(namespaces.client);
        frames.frame(namespaces.client);
      }
      keeper = new PresenceKeeper(store.presence, namespaces, announce, replicaId, (config.PRESENCE_TTL_S * 1000) / 3, report);
      if (options.dispatcher) return options.dispatcher(replicaId, namespaces.agent, deliveries);
      const handoff = topology.kind !== 'cluster';
      return new ClusterDispatcher(replicaId, namespaces.agent, deliveries, pub, channels, dispatchChannel, report, handoff);
    },
    start() {
      keeper?.start();
      canary.start();
    },
    stop() {
      canary.stop();
      keeper?.stop();
    },
    // Commands on one connection run in order: a PING answered means the SSUBSCRIBEs sent before it are done.
    subscriptionsSettled: async () => {
      await sub.ping();
    },
    subscriptions: {
      intact: () => recovery.intact(),
      onGap: (listener) => recovery.onGap(listener),
    },
    readinessChecks: async () => ({ redisPubSub: canary.healthy() }),
    async close() {
      closing = true;
      recovery.close();
      canary.stop();
      keeper?.stop();
      await channels.unsubscribeAll();
      await Promise.all([quitConnection(pub), quitConnection(sub)]);
    },
  };
}
