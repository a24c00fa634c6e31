import type { Namespace, Socket } from 'socket.io';
import { Events } from '../../protocol';
import {
  deliveryStandIn,
  interceptBroadcasts,
  writeEncoded,
  type BroadcastPacket as Packet,
  type EncodedWrite,
} from '../../internals/socket-io-adapter.internals';

interface Held {
  packet?: Packet;
  write: EncodedWrite;
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
 * Orders live traffic after a recovering socket's replay (docs/protocol.md, "Recovery": neither lost, reordered nor
 * doubled). The socket is in its rooms from the start, so nothing published after the log read is
 * lost; what is broadcast to it while the replay is read and sent is held, then written after it;
 * and a live copy of a replayed message (logged before the read, broadcast after it, so it arrives
 * held or shortly after the release) is dropped.
 *
 * Every broadcast, local or from another replica through the Redis adapter, reaches a socket
 * through the adapter's per-socket step ({@link interceptBroadcasts}). For a gated socket that step
 * gets a stand-in ({@link deliveryStandIn}) that sees the packet and decides about the write;
 * everything else goes to the real socket. test/cluster/history.test.ts and
 * test/integration/internals/socket-io-adapter.internals.test.ts fail if Socket.IO stops delivering
 * this way.
 */
export class ReplayGates {
  private readonly gates = new Map<string, Gate>();

  constructor(nsp: Namespace) {
    // Almost always no socket is recovering: then a broadcast goes through untouched.
    interceptBroadcasts(
      nsp,
      (apply) => (opts, deliver) =>
        this.gates.size === 0
          ? apply(opts, deliver)
          : apply(opts, (socket) => {
              const gate = this.gates.get(socket.id);
              if (gate && gate.held === null && Date.now() > gate.until) this.gates.delete(socket.id);
              deliver(gate && this.gates.has(socket.id) ? this.standIn(socket, gate) : socket);
            }),
    );
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
    for (const { packet, write } of held) if (!this.isCopy(socket, gate, packet)) writeEncoded(socket, write);
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
    return deliveryStandIn(socket, (packet, write) => {
      if (gate.held) gate.held.push({ packet, write });
      else if (!this.isCopy(socket, gate, packet)) writeEncoded(socket, write);
    });
  }
}
