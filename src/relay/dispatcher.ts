import type { Namespace, Socket } from 'socket.io';
import { Events, type AgentApproval, type AgentInboundMessage } from '../protocol';
import { emitJsonWithAck } from '../internals/socket-io.internals';
import type { DedupeKey, DedupeRecord, Handoff, RuntimeEntry } from '../store/store';

/** How a runtime socket answered a delivery: it acked, did not in time, or left. */
export type SocketDelivery = 'acked' | 'timeout' | 'gone';

/**
 * How one delivery attempt to a chosen runtime ended. On `acked` the dedupe record given with the
 * delivery was marked delivered by the replica that holds the runtime ({@link RuntimeDeliveries.mark}).
 */
export type DeliveryResult = SocketDelivery;

/** A delivery's dedupe record, which the runtime's replica marks delivered once the runtime acked. */
export interface DeliveryRecord {
  key: DedupeKey;
  record: DedupeRecord;
  ttlS: number;
}

/** What a runtime is handed and acks: a client message, or a user's approval decision (docs/parts.md). */
export type RuntimeEvent = typeof Events.message | typeof Events.approval;

/**
 * Hands a client message (or an approval decision, `event`) to one agent runtime and waits for its ack. The cluster implementation
 * forwards to the replica that holds the runtime and gets the ack back point to point.
 */
export interface RuntimeDispatcher {
  deliver(
    target: RuntimeEntry,
    message: AgentInboundMessage | AgentApproval,
    timeoutMs: number,
    record: DeliveryRecord | null,
    event?: RuntimeEvent,
  ): Promise<DeliveryResult>;
  /**
   * A delivery of `message` (to the runtime of rendezvous seed `seed`) for the store to start with
   * the intake, or null where it cannot: then {@link deliver} as usual.
   */
  prepare(message: AgentInboundMessage, timeoutMs: number, seed: number, record: DeliveryRecord): PreparedDelivery | null;
  close(): Promise<void>;
}

/** A delivery the store may start ({@link Handoff}); exactly one of its functions is called after the intake. */
export interface PreparedDelivery {
  handoff: Handoff;
  /** The store published the request, `receivers` got it: resolves as {@link RuntimeDispatcher.deliver} would. */
  handedOff(receivers: number): Promise<DeliveryResult>;
  /** The store did not hand it off (or failed): forget it. */
  cancel(): void;
}

/**
 * Deliveries to runtime sockets of this replica that await the runtime's ack. One per hub; the
 * local and the cluster dispatcher share it.
 */
export class RuntimeDeliveries {
  /** The deliveries awaiting each runtime's ack. */
  private readonly inFlight = new WeakMap<Socket, PendingAcks>();

  constructor(
    /** Writes a record's delivered mark; reports its own failure (the hub's: store.dedupe.markDelivered). */
    private readonly markDelivered: (record: DeliveryRecord) => Promise<void> = async () => {},
  ) {}

  /**
   * The one place a delivered mark is written: by the replica that holds the runtime, once the
   * runtime acked, not awaited (the ack does not wait for a write whose failure would not change
   * it). Queued ahead of anything this replica sends afterwards on the same connection (the ack's
   * response to another replica, a retry's claim), so a retry's claim finds it. If it fails, a retry
   * of the same clientMessageId is delivered again with the same id, which the agent SDK drops.
   */
  mark(record: DeliveryRecord | null): void {
    if (record !== null) void this.markDelivered(record);
  }

  /**
   * Emits with an ack and settles on the ack, the timeout, or the socket leaving (so a runtime that
   * disconnects mid-delivery is replaced at once instead of after the full timeout).
   *
   * The emit carries Socket.IO's own `.timeout()`: a plain `emit(event, data, ack)` keeps its ack
   * callback (and through it the message) in the socket's ack table until the runtime answers,
   * which a runtime that never acks never does; with the timeout the library drops the entry when
   * it fires. So what a live runtime holds is bounded by its deliveries of the last timeout period.
   */
  deliver(
    socket: Socket,
    message: AgentInboundMessage | AgentApproval,
    timeoutMs: number,
    event: RuntimeEvent = Events.message,
  ): Promise<SocketDelivery> {
    if (!socket.connected) return Promise.resolve('gone');
    return new Promise((resolve) => {
      const pending = new PendingAck(this.pendingOn(socket), resolve);
      socket.timeout(timeoutMs).emit(event, message, (err: Error | null) => pending.settle(err ? 'timeout' : 'acked'));
    });
  }

  /**
   * {@link deliver} for a message given as its JSON (one another replica handed over): written as
   * it came, not parsed and serialized again.
   */
  deliverJson(socket: Socket, json: string, timeoutMs: number, event: RuntimeEvent = Events.message): Promise<SocketDelivery> {
    if (!socket.connected) return Promise.resolve('gone');
    return new Promise((resolve) => {
      const pending = new PendingAck(this.pendingOn(socket), resolve);
      emitJsonWithAck(socket, event, json, timeoutMs, (err) => pending.settle(err ? 'timeout' : 'acked'));
    });
  }

  /**
   * The deliveries pending on `socket`, with one `disconnect` listener for all of them: a listener
   * per delivery would pile up on a busy runtime (Node's max-listeners warning at 11 in flight, and
   * an O(n) removal per ack).
   */
  private pendingOn(socket: Socket): PendingAcks {
    let pending = this.inFlight.get(socket);
    if (!pending) {
      const created = new PendingAcks();
      socket.once('disconnect', () => created.settleAll('gone'));
      this.inFlight.set(socket, created);
      pending = created;
    }
    return pending;
  }
}

/**
 * The deliveries pending on one runtime socket, oldest first, as a list through the deliveries
 * themselves. Not a Set: with the usual one or two in flight, the delete that empties a Set makes
 * V8 shrink it into a newly allocated table, one per message, which the young generation then
 * carries (about 120 bytes per round trip were promoted that way before a mark-compact freed them).
 */
class PendingAcks {
  private oldest: PendingAck | null = null;
  private newest: PendingAck | null = null;

  add(pending: PendingAck): void {
    pending.older = this.newest;
    if (this.newest !== null) this.newest.newer = pending;
    else this.oldest = pending;
    this.newest = pending;
  }

  remove(pending: PendingAck): void {
    const { older, newer } = pending;
    if (older !== null) older.newer = newer;
    else this.oldest = newer;
    if (newer !== null) newer.older = older;
    else this.newest = older;
    pending.older = pending.newer = null;
  }

  /** Settles every pending delivery with `result`, oldest first. */
  settleAll(result: SocketDelivery): void {
    while (this.oldest !== null) this.oldest.settle(result);
  }
}

/** A delivery awaiting its runtime's ack, listed on its socket's {@link PendingAcks} until it settles. */
class PendingAck {
  /** Neighbours on the list, for {@link PendingAcks} alone. */
  older: PendingAck | null = null;
  newer: PendingAck | null = null;
  private listed = true;

  constructor(
    private readonly list: PendingAcks,
    private readonly resolve: (result: SocketDelivery) => void,
  ) {
    list.add(this);
  }

  /** Ends the delivery with `result` the first time; the ack, timeout or disconnect that comes later finds it settled. */
  settle(result: SocketDelivery): void {
    if (!this.listed) return;
    this.listed = false;
    this.list.remove(this);
    this.resolve(result);
  }
}

/** Delivers to runtimes connected to this replica. */
export class LocalDispatcher implements RuntimeDispatcher {
  constructor(
    private readonly agents: Namespace,
    private readonly deliveries: RuntimeDeliveries,
  ) {}

  deliver(
    target: RuntimeEntry,
    message: AgentInboundMessage | AgentApproval,
    timeoutMs: number,
    record: DeliveryRecord | null = null,
    event?: RuntimeEvent,
  ): Promise<DeliveryResult> {
    const socket = this.agents.sockets.get(target.socketId);
    if (!socket?.connected) return Promise.resolve('gone');
    return this.deliveries.deliver(socket, message, timeoutMs, event).then((result) => {
      if (result === 'acked') this.deliveries.mark(record);
      return result;
    });
  }

  prepare(): null {
    return null;
  }

  async close(): Promise<void> {}
}
