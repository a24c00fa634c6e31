import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import type { RedisClient } from '../store/redis/redis-client';
import type { Namespace, Server } from 'socket.io';
import type { RedisErrorReporter } from './redis-connections';

/**
 * `sharded`: Redis 7 sharded pub/sub with `subscriptionMode: "dynamic"`, so a broadcast to one
 * room reaches only replicas holding that room (a unicast reply costs the same with 2 or 20
 * replicas). `classic`: the PUBLISH/PSUBSCRIBE adapter where every replica receives every
 * broadcast; kept to measure against (bench/adapter-fanout.mjs).
 */
export type AdapterKind = 'sharded' | 'classic';

/** The adapter's internals used to restore its subscriptions (ShardedRedisAdapter, 8.3). */
interface ShardedAdapterInternals {
  opts: { subscriptionMode?: string };
  channel: string;
  responseChannel: string;
  rooms: Map<string, Set<string>>;
  shouldUseASeparateNamespace(room: string): boolean;
  dynamicChannel(room: string): string;
  doPublish(message: unknown): Promise<unknown>;
  doPublishResponse(uid: string, response: unknown): Promise<unknown>;
}

export function installAdapter(
  io: Server,
  kind: AdapterKind,
  pub: RedisClient,
  sub: RedisClient,
  channelPrefix: string,
  report: RedisErrorReporter,
): void {
  if (kind === 'classic') {
    io.adapter(createAdapter(pub, sub, { key: channelPrefix }));
    return;
  }
  const factory = createShardedAdapter(pub, sub, { channelPrefix, subscriptionMode: 'dynamic' });
  io.adapter(function (this: unknown, nsp: unknown) {
    const adapter = (factory as unknown as (nsp: unknown) => ShardedAdapterInternals).call(this, nsp);
    // ClusterAdapter swallows publish errors (debug output only); count and log them, then let it
    // carry on as before: the local part of a broadcast is still delivered.
    const doPublish = adapter.doPublish.bind(adapter);
    adapter.doPublish = (message) =>
      doPublish(message).catch((err: unknown) => {
        report('adapter', err, 'adapter publish failed; other replicas missed a broadcast');
        throw err;
      });
    const doPublishResponse = adapter.doPublishResponse.bind(adapter);
    adapter.doPublishResponse = (uid, response) =>
      doPublishResponse(uid, response).catch((err: unknown) => {
        report('adapter', err, 'adapter response publish failed');
        throw err;
      });
    return adapter;
  } as unknown as Parameters<Server['adapter']>[0]);
}

/**
 * The channel of a room of the namespace, when its adapter gives the room a channel of its own (the
 * sharded adapter in dynamic mode, for every room that is not a socket id) and so a replica holds a
 * subscription to it exactly while it holds a socket of the room; null otherwise (any other adapter
 * or mode: a count of the channel's subscribers would tell nothing).
 */
export function roomChannelNamer(nsp: Namespace): ((room: string) => string | null) | null {
  const adapter = nsp.adapter as unknown as Partial<ShardedAdapterInternals>;
  if (typeof adapter.dynamicChannel !== 'function' || typeof adapter.shouldUseASeparateNamespace !== 'function') return null;
  const a = adapter as ShardedAdapterInternals;
  if (a.opts?.subscriptionMode !== 'dynamic') return null;
  return (room) => (a.shouldUseASeparateNamespace(room) ? a.dynamicChannel(room) : null);
}

/**
 * Every sharded channel the namespaces' adapters need right now: their own two, plus one per
 * public room (dynamic mode). Used to restore subscriptions after an outage, since ioredis only
 * restores subscriptions that had succeeded, and rooms created while Redis was away had none.
 */
export function adapterChannels(io: Server): string[] {
  const channels: string[] = [];
  for (const nsp of (io as unknown as { _nsps: Map<string, { adapter: unknown }> })._nsps.values()) {
    const adapter = nsp.adapter as Partial<ShardedAdapterInternals>;
    if (typeof adapter.dynamicChannel !== 'function' || !adapter.rooms) continue;
    const a = adapter as ShardedAdapterInternals;
    channels.push(a.channel, a.responseChannel);
    for (const room of a.rooms.keys()) if (a.shouldUseASeparateNamespace(room)) channels.push(a.dynamicChannel(room));
  }
  return channels;
}
