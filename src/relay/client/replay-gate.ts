import type { Namespace, Socket } from 'socket.io';
import { Events } from '../../protocol';

/** The parts of Socket.IO's in-memory adapter and client this gate relies on (4.8). */
interface ApplyingAdapter {
  apply(opts: unknown, callback: (socket: Socket) => void): void;
}
interface EngineWriter {
  writeToEngine(encoded: unknown, options: unknown): void;
}
interface Packet {
  data?: unknown[];
}
interface Held {
  packet?: Packet;
  encoded: unknown;
  options: unknown;
}

/**
 * How long after a replay live copies of replayed messages are still dropped. A message is
 * broadcast right after it is logged, so its copy trails the log read by a Redis round trip or
 * two; this bounds how long a socket's broadcasts pay for the check.
 */
const TRAILING_COPIES_MS = 10_000;

interface Gate {
  /** Broadcasts held while the replay is read and sent; null once released. */
  held: Held[] | null;
  /** Replayed ids whose live copy has not come yet. */
  replayed: Set<string>;
  /** Open streams sent as `message:start` with the seq they held: live deltas up to it are copies. */
  streams: Map<string, number>;
  until: number;
}

/**
 * Orders live traffic after a recovering socket's replay (SPEC §8: neither lost, reordered nor
 * doubled). The socket is in its rooms from the start, so nothing published after the log read is
 * lost; what is broadcast to it while the replay is read and sent is held, then written after it;
 * and a live copy of a replayed message (logged before the read, broadcast after it, so it arrives
 * held or shortly after the release) is dropped.
 *
 * Every broadcast, local or from another replica through the Redis adapter, reaches a socket
 * through the adapter's `apply(opts, callback)`, whose callback writes the pre-encoded packet with
 * `socket.client.writeToEngine` after `socket.notifyOutgoingListeners(packet)`. For a gated socket
 * the callback gets a stand-in that sees the packet and decides about the write; everything else
 * goes to the real socket. test/cluster/history.test.ts fails if Socket.IO stops delivering this way.
 */
export class ReplayGates {
  private readonly gates = new Map<string, Gate>();

  constructor(nsp: Namespace) {
    const adapter = nsp.adapter as unknown as ApplyingAdapter;
    const apply = adapter.apply.bind(adapter);
    // Almost always no socket is recovering: then a broadcast goes through untouched.
    adapter.apply = (opts, callback) =>
      this.gates.size === 0
        ? apply(opts, callback)
        : apply(opts, (socket) => {
            const gate = this.gates.get(socket.id);
            if (gate && gate.held === null && Date.now() > gate.until) this.gates.delete(socket.id);
            callback(gate && this.gates.has(socket.id) ? this.standIn(socket, gate) : socket);
          });
  }

  /** Starts holding broadcasts to `socket`; call before it joins its rooms. */
  hold(socket: Socket): void {
    this.gates.set(socket.id, { held: [], replayed: new Set(), streams: new Map(), until: Number.POSITIVE_INFINITY });
  }

  /**
   * Writes what was held, in order, except copies of the `replayed` messages (and their ends) and of
   * what the `streams` snapshot holds (its starts, and deltas up to its seq), then keeps dropping
   * such copies for a while. A socket that disconnected meanwhile is only forgotten.
   */
  release(socket: Socket, replayed: ReadonlySet<string>, streams: ReadonlyMap<string, number> = new Map()): void {
    const gate = this.gates.get(socket.id);
    if (!gate?.held || !socket.connected) {
      this.gates.delete(socket.id);
      return;
    }
    const held = gate.held;
    gate.held = null;
    gate.replayed = new Set(replayed);
    gate.streams = new Map(streams);
    gate.until = Date.now() + TRAILING_COPIES_MS;
    const writer = socket.client as unknown as EngineWriter;
    for (const { packet, encoded, options } of held) if (!this.isCopy(socket, gate, packet)) writer.writeToEngine(encoded, options);
    if (gate.replayed.size === 0 && gate.streams.size === 0) this.gates.delete(socket.id);
  }

  /** Forgets a socket that ended. */
  drop(socket: Socket): void {
    this.gates.delete(socket.id);
  }

  /**
   * True when `packet` is a live copy of what the socket got already: a replayed message (the id
   * is then forgotten) or its stream's end, or a start or delta the streams' snapshot held.
   */
  private isCopy(socket: Socket, gate: Gate, packet: Packet | undefined): boolean {
    const [event, payload] = packet?.data ?? [];
    const { id, seq } = (payload ?? {}) as { id?: string; seq?: number };
    if (id === undefined) return false;
    if (event === Events.messageDelta) return seq !== undefined && seq <= (gate.streams.get(id) ?? -1);
    if (event === Events.messageStart) return gate.streams.has(id);
    if (event === Events.messageEnd) return gate.replayed.has(id);
    if (event !== Events.message || !gate.replayed.delete(id)) return false;
    if (gate.replayed.size === 0 && gate.streams.size === 0 && gate.held === null) this.gates.delete(socket.id);
    return true;
  }

  /** `socket`, with its engine writes held (during the replay) or filtered (after it). */
  private standIn(socket: Socket, gate: Gate): Socket {
    let packet: Packet | undefined;
    const real = socket.client as unknown as EngineWriter;
    const client = forwarding(socket.client as object, {
      writeToEngine: (encoded: unknown, options: unknown) => {
        if (gate.held) gate.held.push({ packet, encoded, options });
        else if (!this.isCopy(socket, gate, packet)) real.writeToEngine(encoded, options);
      },
    });
    return forwarding(socket, {
      client,
      notifyOutgoingListeners: (p: Packet) => {
        packet = p;
      },
    });
  }
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
