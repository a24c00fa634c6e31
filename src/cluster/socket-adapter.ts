import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import type { RedisClient } from '../store/redis/redis-client';
import type { Namespace, Server } from 'socket.io';
import type { Publication } from '../store/conversation-log';
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
  uid: string;
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

/** The sender of a publication made with a log append: no adapter's uid, so none ignores it as its own. */
const FROM_THE_LOG = 'relay-log';

/** socket.io-adapter's `MessageType.BROADCAST` and socket.io-parser's `PacketType.EVENT` (4.8). */
const ADAPTER_BROADCAST = 3;
const EVENT_PACKET = 2;

/**
 * What the namespace's adapter publishes for `nsp.to(room).emit(event, data)`, for a store to
 * publish in the same step as a log append: the room's own channel and the adapter's JSON encoding
 * of a BROADCAST with no flags, around the place of `data`'s JSON, which the store fills in with the
 * text it logs. Null where {@link roomChannelNamer} gives no channel. Relayed messages are JSON
 * values (validated on the way in), which the adapter encodes as JSON too; with binary parts it
 * would use MessagePack.
 *
 * It names no replica as its sender ({@link FROM_THE_LOG}), so this replica's adapter delivers it
 * to its own sockets too and the caller emits nothing itself. Every message a socket gets this way
 * comes on one connection in the order Redis ran the appends, which is the log's order: a socket
 * never holds a newer message while an older one is still on its way (as it would with a direct
 * local emit while the subscription lags), so when the subscription drops, what the socket missed
 * is exactly what comes after the last message it saw, and a replay from there restores it.
 */
export function roomBroadcastEncoder(nsp: Namespace): ((room: string, event: string) => Publication | null) | null {
  const channelOf = roomChannelNamer(nsp);
  if (channelOf === null) return null;
  const from = `"uid":${JSON.stringify(FROM_THE_LOG)},"nsp":${JSON.stringify(nsp.name)}`;
  return (room, event) => {
    const channel = channelOf(room);
    if (channel === null) return null;
    const before = `{"type":${ADAPTER_BROADCAST},"data":{"packet":{"type":${EVENT_PACKET},"data":[${JSON.stringify(event)},`;
    const after = `]},"opts":{"rooms":[${JSON.stringify(room)}],"except":[],"flags":{}}},${from}}`;
    return { channel, before, after };
  };
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
