import type { Namespace, Server } from 'socket.io';
import type { RedisClient } from '../store/redis/redis-client';
import type { Publication } from '../store/conversation-log';
import type { RedisErrorReporter } from './redis-connections';
import { namespacesOf } from '../internals/socket-io.internals';
import { adapterChannels as channelsOf, roomBroadcastFramer, roomChannelNamer, shardedAdapter } from '../internals/redis-adapter.internals';

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
 * What the namespace's adapter publishes for `nsp.to(room).emit(event, data)`, for a store to
 * publish in the same step as a log append; the store fills in `data` with the JSON text it logs.
 * Relayed messages are JSON values (validated on the way in), which the adapter encodes as JSON too.
 *
 * It names no replica as its sender, so this replica's adapter delivers it to its own sockets too
 * and the caller emits nothing itself. Every message a socket gets this way comes on one connection
 * in the order Redis ran the appends, which is the log's order: a socket never holds a newer message
 * while an older one is still on its way (as it would with a direct local emit while the
 * subscription lags), so when the subscription drops, what the socket missed is exactly what comes
 * after the last message it saw, and a replay from there restores it.
 */
export function roomBroadcastEncoder(nsp: Namespace): ((room: string, event: string) => Publication | null) | null {
  return roomBroadcastFramer(nsp);
}

/**
 * Every sharded channel the namespaces' adapters need right now. Used to restore subscriptions
 * after an outage, since ioredis only restores subscriptions that had succeeded, and rooms created
 * while Redis was away had none.
 */
export function adapterChannels(io: Server): string[] {
  return channelsOf(namespacesOf(io));
}
