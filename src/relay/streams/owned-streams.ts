import type { Socket } from 'socket.io';
import { TokenBucket } from '../../limits/token-bucket';
import type { MessagePart, SendAck } from '../../protocol';
import { errorAck } from '../../protocol';
import type { LoggedMessage } from '../../store/conversation-log';
import type { StreamTarget } from '../../store/stream-store';
import { DeadlineQueue, type Deadline } from '../deadline-queue';
import { DeliveryBudgetError, type DeliveryBudget } from '../delivery-budget';
import type { DeltaFrames, PartFrames, RelayContext } from '../relay.context';
import type { ChangeOrder } from './change-order';

/** A stream owned by a runtime socket of this replica (the target of its deltas in the store). */
export interface Owned extends Deadline, StreamTarget {
  /** The user's room, and what other replicas get of a delta or a part to it (null: emitted through the adapter). */
  room: string;
  deltaFrames: DeltaFrames | null;
  partFrames: PartFrames | null;
  /**
   * The parts as the runtime made them, to check its next changes against: types, tool states and
   * tool input; the text of text and reasoning parts is not kept here (the store has it).
   */
  parts: MessagePart[];
  socketId: string;
  start: LoggedMessage;
  /** Bytes counted against STREAM_MAX_BYTES (text deltas, parts' and updates' JSON), counting the changes still on their way to the store. */
  bytes: number;
  seq: number;
  /** Appends sent and not yet answered: the runtime's end waits for them. */
  appends: Set<Promise<unknown>>;
  /** Its changes in the order the runtime sent them, each checked against the ones before it. */
  order: ChangeOrder;
  /** The runtime asked to end it: deltas after that are refused. */
  ending: boolean;
  /** A delta could not be recorded: it ends `error` (pending until shared state takes the end). */
  failed: boolean;
  /**
   * The bot's delivery budget refused a delta: later ones are refused too, so the text stays a
   * prefix of what the runtime wrote (a delta sent without an ack would otherwise leave a hole that
   * no one hears of) until the runtime ends it, with a `text` that replaces it if it likes.
   */
  throttled: boolean;
  lastDeltaAt: number;
  /** When the stream's expiry in shared state was last pushed back (open, or a delta that renewed it). */
  renewedAt: number;
  /** Until when shared state holds this replica's promise that the stream's owner is alive (0: not yet). */
  promisedUntil: number;
  endsBy: number;
}

/** Per runtime socket: its open streams and its delta token bucket. */
interface SocketStreams {
  ids: Set<string>;
  bucket: TokenBucket;
}

/**
 * The streams owned by this replica's runtime sockets (docs/streaming.md), by id and by socket,
 * with their deadlines (idle, max duration) and stop graces on one timer.
 */
export class OwnedStreams {
  private readonly owned = new Map<string, Owned>();
  private readonly sockets = new Map<string, SocketStreams>();
  readonly deadlines = new DeadlineQueue();

  constructor(private readonly ctx: RelayContext) {}

  get(id: string): Owned | undefined {
    return this.owned.get(id);
  }

  has(id: string): boolean {
    return this.owned.has(id);
  }

  values(): IterableIterator<Owned> {
    return this.owned.values();
  }

  /** Takes an opened stream in, its deadline due at `dueMs`. */
  add(owned: Owned, dueMs: number): void {
    this.owned.set(owned.id, owned);
    this.deadlines.add(owned, dueMs);
  }

  forget(owned: Owned): void {
    if (!this.owned.delete(owned.id)) return;
    this.deadlines.remove(owned);
    this.sockets.get(owned.socketId)?.ids.delete(owned.id);
    this.ctx.metrics.streamsOpen.dec();
  }

  /** The stream `id` when `socket` owns it. */
  ownedBy(socket: Socket, id: string): Owned | undefined {
    const owned = this.owned.get(id);
    return owned?.socketId === socket.id ? owned : undefined;
  }

  /** A runtime socket's open streams (counted from their open on) and its delta bucket. */
  streamsOf(socketId: string): SocketStreams {
    let mine = this.sockets.get(socketId);
    if (!mine) {
      const { config } = this.ctx;
      mine = { ids: new Set(), bucket: new TokenBucket(config.STREAM_DELTA_RATE_PER_S, config.STREAM_DELTA_RATE_BURST) };
      this.sockets.set(socketId, mine);
    }
    return mine;
  }

  /** The runtime socket left: the streams it owned (still to be ended). */
  socketLeft(socketId: string): Owned[] {
    const mine = this.sockets.get(socketId);
    this.sockets.delete(socketId);
    const left: Owned[] = [];
    for (const id of mine?.ids ?? []) {
      const owned = this.owned.get(id);
      if (owned) left.push(owned);
    }
    return left;
  }

  /** Removes every deadline from the timer (the hub stops). */
  clearDeadlines(): void {
    for (const owned of this.owned.values()) this.deadlines.remove(owned);
  }
}

/** A RATE_LIMITED ack when the bot's delivery budget cannot pay for an event to `clientId`'s sockets; else null, paid. */
export function overBudget(deliveries: DeliveryBudget, agentId: string, clientId: string): (SendAck & { ok: false }) | null {
  try {
    deliveries.charge(agentId, clientId);
    return null;
  } catch (err) {
    if (err instanceof DeliveryBudgetError) return errorAck('RATE_LIMITED', err.message);
    throw err;
  }
}

/** A part as the owner keeps it: without the text of a text or reasoning part (the store has it). */
export function withoutText(part: MessagePart): MessagePart {
  return part.type === 'text' || part.type === 'reasoning' ? { type: part.type, text: '' } : part;
}
