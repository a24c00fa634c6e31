import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisAuth, RedisTopology } from '../config/redis-topology';
import type { RedisClient } from '../store/redis/redis-client';

export type { RedisClient } from '../store/redis/redis-client';
import type { Logger } from '../logging/logger';
import { ThrottledLog } from '../logging/throttled-log';
import type { HubMetrics } from '../metrics/metrics';
import { corkPerTurn } from '../net/cork-per-turn';
import { releaseResetOnStop, seedFromDiscoveredNodes } from '../internals/ioredis.internals';
import { failLateCommands } from './command-deadlines';

/** Reports a Redis failure: counted per component, logged at a bounded rate. */
export type RedisErrorReporter = (component: string, err: unknown, message: string) => void;

export function redisErrorReporter(logger: Logger, metrics: HubMetrics): RedisErrorReporter {
  const log = new ThrottledLog(logger);
  return (component, err, message) => {
    metrics.redisErrors.inc({ component });
    log.warn(component, err, message);
  };
}

/**
 * Options that keep a replica alive and its memory bounded while Redis is away: commands fail at
 * once instead of queueing (no offline queue), in-flight ones on the command connection fail after
 * {@link COMMAND_TIMEOUT_MS} instead of being resent minutes later (see {@link failLateCommands}),
 * and reconnects are retried forever with a capped delay so service resumes about a second after
 * Redis does.
 */
const retry = (attempt: number): number => Math.min(100 * attempt, 1000);

const COMMAND_TIMEOUT_MS = 2000;

const BOUNDED: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 2000,
  retryStrategy: retry,
};

/** Every connection a replica needs, made by {@link createRedisConnections} for one topology. */
export interface RedisConnections {
  topology: RedisTopology['kind'];
  /** Commands and publishes (store, adapter, dispatcher, canary). */
  command: RedisClient;
  /**
   * Subscriptions. Ones lost while Redis was away are restored by the caller on `ready` (ioredis
   * only restores those that had succeeded), so no offline queue here either. On a Cluster it
   * holds one sharded subscriber per master, each following its slots through failovers.
   */
  subscriber: RedisClient;
}

/** The one place that turns a topology into connections, all with the {@link BOUNDED} options. */
export function createRedisConnections(topology: RedisTopology, name: string): RedisConnections {
  const subscriberOptions: RedisOptions = { autoResendUnfulfilledCommands: true };
  const make = (role: string, extra: RedisOptions = {}): RedisClient => {
    const connectionName = `${name}:${role}`;
    switch (topology.kind) {
      case 'single':
        return new Redis(topology.url, { ...BOUNDED, ...extra, connectionName });
      case 'sentinel':
        return new Redis({
          ...BOUNDED,
          ...extra,
          ...auth(topology.auth),
          connectionName,
          sentinels: topology.sentinels,
          name: topology.name,
          ...(topology.sentinelPassword !== undefined ? { sentinelPassword: topology.sentinelPassword } : {}),
          enableTLSForSentinelMode: topology.auth.tls,
          sentinelRetryStrategy: retry,
          // Learn of a promotion from the Sentinels at once instead of when the old master dies.
          failoverDetector: true,
          // A demoted master answers writes with READONLY: find the new one.
          reconnectOnError: (err: Error) => err.message.startsWith('READONLY'),
        });
      case 'cluster': {
        // Else a Cluster that disconnects while re-creating its sharded subscribers never has any again.
        releaseResetOnStop();
        const cluster = new Cluster(topology.nodes, clusterOptions(topology.auth, { ...extra, connectionName }));
        seedFromDiscoveredNodes(cluster, topology.nodes);
        return cluster;
      }
    }
  };
  const command = make('cmd');
  perConnection(command, (redis) => {
    coalesceWrites(redis);
    failLateCommands(redis, COMMAND_TIMEOUT_MS);
  });
  const subscriber = make('sub', subscriberOptions);
  if (topology.kind === 'sentinel') for (const client of [command, subscriber] as Redis[]) reconnectWhenEnded(client);
  return { topology: topology.kind, command, subscriber };
}

/** Connections being closed by {@link quitConnection}: the only ones that may stay ended. */
const closing = new WeakSet<RedisClient>();

/**
 * Connects `redis` again whenever it ends without {@link quitConnection}. ioredis ends a Sentinel
 * connection for good, with no further retries, when its failover detector hears +switch-master
 * while a reconnect attempt is asking a Sentinel for the master: the attempt is cancelled and its
 * failure taken as final. A replica would then answer SERVER_UNAVAILABLE until restarted.
 */
function reconnectWhenEnded(redis: Redis): void {
  redis.on('end', () => {
    if (closing.has(redis)) return;
    const timer = setTimeout(() => {
      // A failed attempt ends the connection again, which schedules the next one.
      if (!closing.has(redis) && redis.status === 'end') redis.connect().catch(() => {});
    }, retry(1));
    timer.unref();
  });
}

/** Runs `setUp` on the client's connection, or on each node's connection of a Cluster. */
function perConnection(client: RedisClient, setUp: (redis: Redis) => void): void {
  if (client instanceof Cluster) client.on('+node', setUp);
  else setUp(client);
}

/**
 * Sends the commands a replica issues within one turn of the event loop in one socket write (see
 * {@link corkPerTurn}): ioredis writes each command on its own, and auto-pipelining only gathers
 * those of one synchronous run, while a message's commands come from separate I/O callbacks. After
 * a reconnect, the new socket.
 */
function coalesceWrites(redis: Redis): void {
  redis.on('connect', () => corkPerTurn(redis.stream));
}

function auth(a: RedisAuth): RedisOptions {
  return {
    ...(a.username !== undefined ? { username: a.username } : {}),
    ...(a.password !== undefined ? { password: a.password } : {}),
    ...(a.tls ? { tls: {} } : {}),
  };
}

function clusterOptions(a: RedisAuth, extra: RedisOptions): ClusterOptions {
  const { retryStrategy: _nodesDoNotRetry, enableOfflineQueue: _cluster, ...perNode } = { ...BOUNDED, ...extra, ...auth(a) };
  return {
    enableOfflineQueue: false,
    shardedSubscribers: true,
    clusterRetryStrategy: retry,
    slotsRefreshTimeout: 2000,
    // Errors during a failover (connection closed, CLUSTERDOWN, TRYAGAIN) are retried for ~2 s.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    maxRedirections: 10,
    redisOptions: perNode,
  };
}

/**
 * Attaches a rejection handler to every call of `commands` on `client`, so fire-and-forget calls
 * (the Redis adapter publishes and subscribes without awaiting) never become unhandled rejections.
 * Callers that do await still see the rejection.
 */
export function guardCommands(client: RedisClient, commands: readonly string[], onError: (command: string, err: unknown) => void): void {
  const target = client as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const command of commands) {
    const original = target[command].bind(client);
    target[command] = (...args: unknown[]) => {
      const result = original(...args);
      if (result instanceof Promise) result.catch((err: unknown) => onError(command, err));
      return result;
    };
  }
}

/** Resolves true once `client` is ready, false after `timeoutMs` (the caller carries on unready). */
export function whenReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => settle(false), timeoutMs);
    const onReady = () => settle(true);
    function settle(ready: boolean) {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ready);
    }
    client.on('ready', onReady);
  });
}

/** QUIT, or a hard disconnect when Redis does not answer within `timeoutMs`. */
export async function quitConnection(client: RedisClient, timeoutMs = 1000): Promise<void> {
  closing.add(client);
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  const timer = setTimeout(() => client.disconnect(), timeoutMs);
  try {
    await client.quit();
    // QUIT leaves a Sentinel connection's failover detector subscribed on every Sentinel (and the
    // process alive); disconnect() is what closes it.
    if (client instanceof Redis) client.disconnect();
  } catch {
    client.disconnect();
  } finally {
    clearTimeout(timer);
  }
}
