import type { Server } from 'socket.io';
import type { RedisClient } from '../store/redis/redis-client';
import type { RedisErrorReporter } from './redis-connections';
import { namespacesOf } from '../internals/socket-io.internals';
import { adapterChannels as channelsOf, roomChannelNamer, shardedAdapter } from '../internals/redis-adapter.internals';

export { roomChannelNamer };

/**
 * Installs another Socket.IO adapter on `io` in place of the hub's own (bench/ measures
 * alternatives this way); given the connections and the prefix the hub's adapter would use.
 */
export type AdapterInstaller = (io: Server, pub: RedisClient, sub: RedisClient, channelPrefix: string) => void;

/**
 * Installs Redis 7 sharded pub/sub with `subscriptionMode: "dynamic"`, so a broadcast to one room
 * reaches only replicas holding that room (a unicast reply costs the same with 2 or 20 replicas).
 * The adapter swallows publish errors (debug output only); they are counted and logged here, and
 * the local part of a broadcast is still delivered.
 */
export function installAdapter(io: Server, pub: RedisClient, sub: RedisClient, channelPrefix: string, report: RedisErrorReporter): void {
  io.adapter(
    shardedAdapter(pub, sub, channelPrefix, (err, what) =>
      what === 'broadcast'
        ? report('adapter', err, 'adapter publish failed; other replicas missed a broadcast')
        : report('adapter', err, 'adapter response publish failed'),
    ),
  );
}

/**
 * Every sharded channel the namespaces' adapters need right now. Used to restore subscriptions
 * after an outage, since ioredis only restores subscriptions that had succeeded, and rooms created
 * while Redis was away had none.
 */
export function adapterChannels(io: Server): string[] {
  return channelsOf(namespacesOf(io));
}
