import { createShardedAdapter } from '@socket.io/redis-adapter';
import type { Namespace, Server } from 'socket.io';

/**
 * What the hub reads and patches of `@socket.io/redis-adapter`'s ShardedRedisAdapter (and of the
 * ClusterAdapter of socket.io-adapter under it), and the adapter's wire format for a broadcast,
 * which the conversation log publishes itself in the step that appends the message (one Redis
 * round trip instead of two). This module is the only place that names those members or spells
 * that format, checked by test/integration/internals/redis-adapter.internals.test.ts (the frame
 * written here equals what the adapter publishes, byte for byte).
 */
export const REDIS_ADAPTER_CHECKED = { package: '@socket.io/redis-adapter', versions: ['8.3.0'] } as const;

/** The ShardedRedisAdapter members used here. */
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

/** A broadcast as the adapter publishes it: its channel and the frame around the data's JSON. */
export interface BroadcastFrame {
  channel: string;
  before: string;
  after: string;
}

/** Told of a publish the adapter failed (it only writes debug output), before it carries on. */
export type PublishFailure = (err: unknown, what: 'broadcast' | 'response') => void;

/**
 * The sharded adapter in dynamic subscription mode (a room's broadcast goes on the room's own
 * channel), reporting publish failures to `onFailure`.
 */
export function shardedAdapter(
  pub: unknown,
  sub: unknown,
  channelPrefix: string,
  onFailure: PublishFailure,
): Parameters<Server['adapter']>[0] {
  const factory = createShardedAdapter(pub, sub, { channelPrefix, subscriptionMode: 'dynamic' });
  return function (this: unknown, nsp: unknown) {
    const adapter = (factory as unknown as (nsp: unknown) => ShardedAdapterInternals).call(this, nsp);
    const doPublish = adapter.doPublish.bind(adapter);
    adapter.doPublish = (message) =>
      doPublish(message).catch((err: unknown) => {
        onFailure(err, 'broadcast');
        throw err;
      });
    const doPublishResponse = adapter.doPublishResponse.bind(adapter);
    adapter.doPublishResponse = (uid, response) =>
      doPublishResponse(uid, response).catch((err: unknown) => {
        onFailure(err, 'response');
        throw err;
      });
    return adapter;
  } as unknown as Parameters<Server['adapter']>[0];
}

function dynamicAdapter(nsp: Namespace): ShardedAdapterInternals | null {
  const adapter = nsp.adapter as unknown as Partial<ShardedAdapterInternals>;
  if (typeof adapter.dynamicChannel !== 'function' || typeof adapter.shouldUseASeparateNamespace !== 'function') return null;
  return adapter.opts?.subscriptionMode === 'dynamic' ? (adapter as ShardedAdapterInternals) : null;
}

/**
 * The channel of a room of the namespace, when its adapter gives the room a channel of its own (the
 * sharded adapter in dynamic mode, for every room that is not a socket id) and so a replica holds a
 * subscription to it exactly while it holds a socket of the room; null otherwise (any other adapter
 * or mode: a count of the channel's subscribers would tell nothing).
 */
export function roomChannelNamer(nsp: Namespace): ((room: string) => string | null) | null {
  const a = dynamicAdapter(nsp);
  if (a === null) return null;
  return (room) => (a.shouldUseASeparateNamespace(room) ? a.dynamicChannel(room) : null);
}

/** socket.io-adapter's `MessageType.BROADCAST` and socket.io-parser's `PacketType.EVENT`. */
const ADAPTER_BROADCAST = 3;
const EVENT_PACKET = 2;

/** The sender of a frame from {@link roomBroadcastFramer}: no adapter's uid, so none ignores it as its own. */
const FROM_NO_REPLICA = 'relay-log';

/**
 * What the namespace's adapter publishes for `nsp.to(room).emit(event, data)`: the room's own
 * channel and the adapter's JSON encoding of a BROADCAST with no flags, around the place of `data`'s
 * JSON, from no replica in particular, so every replica's adapter delivers it, the publishing one's
 * included. Null where {@link roomChannelNamer} gives no channel. Only for JSON data: with binary
 * parts the adapter uses MessagePack.
 */
export function roomBroadcastFramer(nsp: Namespace): ((room: string, event: string) => BroadcastFrame | null) | null {
  const channelOf = roomChannelNamer(nsp);
  if (channelOf === null) return null;
  const from = `"uid":${JSON.stringify(FROM_NO_REPLICA)},"nsp":${JSON.stringify(nsp.name)}`;
  return (room, event) => {
    const channel = channelOf(room);
    if (channel === null) return null;
    const before = `{"type":${ADAPTER_BROADCAST},"data":{"packet":{"type":${EVENT_PACKET},"data":[${JSON.stringify(event)},`;
    const after = `]},"opts":{"rooms":[${JSON.stringify(room)}],"except":[],"flags":{}}},${from}}`;
    return { channel, before, after };
  };
}

/**
 * Every sharded channel the adapters of `namespaces` need right now: their own two, plus one per
 * public room (dynamic mode).
 */
export function adapterChannels(namespaces: Iterable<Namespace>): string[] {
  const channels: string[] = [];
  for (const nsp of namespaces) {
    const adapter = nsp.adapter as unknown as Partial<ShardedAdapterInternals>;
    if (typeof adapter.dynamicChannel !== 'function' || !adapter.rooms) continue;
    const a = adapter as ShardedAdapterInternals;
    channels.push(a.channel, a.responseChannel);
    for (const room of a.rooms.keys()) if (a.shouldUseASeparateNamespace(room)) channels.push(a.dynamicChannel(room));
  }
  return channels;
}
