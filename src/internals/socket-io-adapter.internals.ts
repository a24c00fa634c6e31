import type { Namespace, Socket } from 'socket.io';

/**
 * How Socket.IO's in-memory adapter (the base of every adapter, the Redis ones included) hands a
 * broadcast to each socket: its private `apply(opts, callback)` calls `callback(socket)` once per
 * receiving socket, and the callback calls `socket.notifyOutgoingListeners(packet)`, then writes
 * the packet, encoded once for the whole room, with `socket.client.writeToEngine(encoded, options)`.
 * Every broadcast, local or from another replica, goes that way. The replay gate
 * (src/relay/client/replay-gate.ts) holds and filters a recovering socket's broadcasts there; this
 * module is the only place that names those three members, checked by
 * test/integration/internals/socket-io-adapter.internals.test.ts.
 */
export const SOCKET_IO_ADAPTER_CHECKED = { package: 'socket.io-adapter', versions: ['2.5.8'] } as const;

/** The adapter's per-socket step of a broadcast: `deliver` is called once per receiving socket. */
export type BroadcastApply = (opts: unknown, deliver: (socket: Socket) => void) => void;

/** A broadcast's packet as the adapter passes it to `notifyOutgoingListeners`. */
export interface BroadcastPacket {
  data?: unknown[];
}

/** A broadcast's write to one socket: the packet, encoded once for the whole room. */
export interface EncodedWrite {
  encoded: unknown;
  options: unknown;
}

interface ApplyingAdapter {
  apply: BroadcastApply;
}
interface EngineWriter {
  writeToEngine(encoded: unknown, options: unknown): void;
}

/** Routes every broadcast of `nsp` through `wrap(apply)` instead of the adapter's own `apply`. */
export function interceptBroadcasts(nsp: Namespace, wrap: (apply: BroadcastApply) => BroadcastApply): void {
  const adapter = nsp.adapter as unknown as Partial<ApplyingAdapter>;
  if (typeof adapter.apply !== 'function') {
    throw new Error(
      'socket.io-adapter no longer delivers broadcasts through Adapter#apply (see src/internals/socket-io-adapter.internals.ts)',
    );
  }
  const apply = adapter.apply.bind(adapter);
  adapter.apply = wrap(apply);
}

/** Writes a broadcast's encoded packet to `socket`, as the adapter would have. */
export function writeEncoded(socket: Socket, write: EncodedWrite): void {
  (socket.client as unknown as EngineWriter).writeToEngine(write.encoded, write.options);
}

/**
 * A stand-in for `socket` to give the adapter's `deliver` callback: it tells `onWrite` of the
 * broadcast's packet and its encoded write instead of writing it; every other property is the
 * socket's own.
 */
export function deliveryStandIn(socket: Socket, onWrite: (packet: BroadcastPacket | undefined, write: EncodedWrite) => void): Socket {
  let packet: BroadcastPacket | undefined;
  const client = forwarding(socket.client as object, {
    writeToEngine: (encoded: unknown, options: unknown) => onWrite(packet, { encoded, options }),
  });
  return forwarding(socket, {
    client,
    notifyOutgoingListeners: (p: BroadcastPacket) => {
      packet = p;
    },
  });
}

/** A proxy of `target` answering `overrides` itself and every other property from `target`. */
function forwarding<T extends object>(target: T, overrides: Record<string, unknown>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (typeof prop === 'string' && prop in overrides) return overrides[prop];
      const value: unknown = Reflect.get(t, prop, t);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(t) : value;
    },
  });
}
