import type { Socket } from 'socket.io';
import { TokenBucket } from '../../limits/token-bucket';
import { payloadError } from '../../protocol/payload-limits';
import type { Tally } from '../../metrics/metrics';
import {
  Authors,
  BROADCAST_TO,
  errorAck,
  Events,
  type MessageEnd,
  type MessageStart,
  type SendAck,
  type StreamDelta,
  type StreamDeltaAck,
  type StreamEnd,
  type StreamStart,
  type StreamStatus,
} from '../../protocol';
import type { LoggedMessage } from '../../store/conversation-log';
import type { DeltaPublication, OpenStream, StreamBounds, StreamEnding, StreamRef, StreamTarget } from '../../store/stream-store';
import { DeadlineQueue, type Deadline } from '../deadline-queue';
import { MessageStamper } from '../ids';
import type { RelayContext, RelayNamespaces } from '../relay.context';
import { Rooms } from '../rooms';
import type { ActivityTracker } from './activity-tracker';
import type { ConsoleFeed } from '../handoff/console-feed';
import type { ConversationControl } from '../handoff/conversation-control';

/** The handoff's parts a stream answers to (docs/handoff.md): refused while an operator holds the conversation, followed by consoles. */
export interface StreamHandoff {
  control: ConversationControl;
  feed: ConsoleFeed;
}

/** A stream owned by a runtime socket of this replica (the target of its deltas in the store). */
interface Owned extends Deadline, StreamTarget {
  /** The user's room, and what other replicas get of a delta to it (null: emitted through the adapter). */
  room: string;
  publication: DeltaPublication | null;
  socketId: string;
  start: LoggedMessage;
  /** UTF-8 bytes of the text, counting the deltas still on their way to the store. */
  bytes: number;
  seq: number;
  /** Appends sent and not yet answered: the runtime's end waits for them. */
  appends: Set<Promise<unknown>>;
  /** The runtime asked to end it: deltas after that are refused. */
  ending: boolean;
  /** A delta could not be recorded: it ends `error` (pending until shared state takes the end). */
  failed: boolean;
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
 * Streamed replies on the hub (docs/streaming.md). A stream belongs to the runtime socket that
 * started it: only that socket's events reach it here, and the store's atomic end makes sure one
 * ender wins when a replica's timeout, a stop grace and the orphan sweep race. Deltas go to the
 * user's room at once, published by the store with the append where it can (one round trip).
 */
export class StreamService {
  private readonly owned = new Map<string, Owned>();
  private readonly sockets = new Map<string, SocketStreams>();
  /** Idle and max-duration deadlines of owned streams, and stop graces, on one timer. */
  private readonly deadlines = new DeadlineQueue();
  private readonly graces = new Set<Deadline>();
  /** Ends the store refused (shared state unreachable): retried by {@link tick}. */
  private readonly pendingEnds = new Map<string, StreamRef & { status: StreamStatus }>();
  /** A round of {@link pendingEnds} retries is under way. */
  private retrying = false;
  private readonly stamps = new MessageStamper();
  private readonly bounds: StreamBounds;
  private readonly deltasIn: Tally;
  private readonly deltasOut: Tally;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly activity: ActivityTracker,
    private readonly handoff?: StreamHandoff,
  ) {
    const { config } = ctx;
    // A stream's shared state outlives its idle timeout, so the timeout (or the orphan sweep) ends it, not expiry.
    this.bounds = { maxBytes: config.STREAM_MAX_BYTES, ttlMs: 2 * config.STREAM_IDLE_TIMEOUT_MS + 60_000 };
    this.deltasIn = ctx.metrics.streamDeltas.bind({ direction: 'in' });
    this.deltasOut = ctx.metrics.streamDeltas.bind({ direction: 'out' });
  }

  private get logged(): boolean {
    return this.ctx.config.HISTORY_ENABLED;
  }

  /** How often the orphan sweep runs. */
  private get sweepMs(): number {
    return Math.max(100, Math.min(1000, this.ctx.config.STREAM_IDLE_TIMEOUT_MS / 4));
  }

  /** How far ahead a replica promises its streams are alive: a dead replica's are swept within the idle timeout. */
  private get promiseMs(): number {
    return this.ctx.config.STREAM_IDLE_TIMEOUT_MS / 2;
  }

  /** Starts the sweep: keeps this replica's streams alive in shared state, ends dead replicas' ones, retries failed ends. */
  startSweep(): void {
    this.timer ??= setInterval(() => void this.tick(), this.sweepMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const owned of this.owned.values()) this.deadlines.remove(owned);
    for (const grace of this.graces) this.deadlines.remove(grace);
    this.graces.clear();
  }

  /** The delta bucket of a runtime socket. */
  bucketOf(socketId: string): TokenBucket {
    return this.streamsOf(socketId).bucket;
  }

  async start(socket: Socket, agentId: string, payload: StreamStart): Promise<SendAck> {
    const { config, metrics } = this.ctx;
    if (payload.to === BROADCAST_TO) return errorAck('INVALID_PAYLOAD', "a stream goes to one user: '*' is refused");
    const tooLarge = payloadError('', payload.data, config.MAX_MESSAGE_BYTES);
    if (tooLarge) return errorAck(tooLarge);
    const mine = this.streamsOf(socket.id);
    if (mine.ids.size >= config.STREAM_MAX_OPEN) return errorAck('STREAM_LIMIT');
    // A stream that opens while an operator holds the conversation never reaches the user.
    if (this.handoff && (await this.handoff.control.read(agentId, payload.to)).state === 'human') return errorAck('CONVERSATION_HELD');
    const { id, ts } = this.stamps.next();
    const start: LoggedMessage = { id, ts, agentId, author: Authors.agent, text: '' };
    if (payload.data !== undefined) start.data = payload.data;
    if (payload.replyTo !== undefined) start.replyTo = payload.replyTo;
    // Counted before the write, so a concurrent start cannot pass the limit while this one awaits.
    mine.ids.add(id);
    try {
      await this.ctx.store.streams.open({ message: start, clientId: payload.to, owner: socket.id }, this.bounds, this.logged);
    } catch (err) {
      mine.ids.delete(id);
      // The open may still run in Redis (a timeout, a connection lost with it), with nobody to end
      // the stream: the sweep ends it `error` once Redis answers (nothing, when it never ran).
      this.pendingEnds.set(id, { agentId, id, status: 'error' });
      throw err;
    }
    const now = Date.now();
    const room = Rooms.client(agentId, payload.to);
    const owned: Owned = {
      agentId,
      id,
      clientId: payload.to,
      room,
      publication: this.ctx.publicationTo(room, Events.messageDelta),
      socketId: socket.id,
      start,
      bytes: 0,
      seq: 0,
      appends: new Set(),
      ending: false,
      failed: false,
      lastDeltaAt: now,
      renewedAt: now,
      promisedUntil: 0,
      endsBy: now + config.STREAM_MAX_DURATION_MS,
      prepared: undefined,
      dueMs: 0,
      slot: -1,
      fire: () => this.due(owned),
    };
    if (!socket.connected) {
      // The runtime left while the stream was being opened: it will not end it.
      mine.ids.delete(id);
      void this.hubEnd(owned, 'interrupted');
      return { ok: true, id, ts };
    }
    this.owned.set(id, owned);
    this.deadlines.add(owned, Math.min(now + config.STREAM_IDLE_TIMEOUT_MS, owned.endsBy));
    this.keepAlive([owned]);
    metrics.streamsStarted.inc();
    metrics.streamsOpen.inc();
    this.activity.reached(agentId, payload.to);
    const message: MessageStart = { ...(start as MessageStart), text: '', seq: 0 };
    this.nsp.client.to(room).emit(Events.messageStart, message);
    this.handoff?.feed.stream(agentId, payload.to, Events.messageStart, message);
    return { ok: true, id, ts };
  }

  async delta(socket: Socket, { id, text }: StreamDelta): Promise<StreamDeltaAck> {
    const owned = this.ownedBy(socket, id);
    if (!owned || owned.ending) return errorAck('STREAM_NOT_FOUND');
    this.deltasIn.add();
    // The store refuses a delta past the limit too; refused here, it costs shared state nothing.
    const size = Buffer.byteLength(text);
    if (owned.bytes + size > this.bounds.maxBytes) return errorAck('PAYLOAD_TOO_LARGE');
    owned.bytes += size;
    const { room, publication } = owned;
    let result;
    // Expiry is renewed once a quarter of it has passed, not by every delta: it then stays at least
    // 1.5 idle timeouts + 45 s ahead of the last delta, more than the idle timeout that ends the stream.
    const now = Date.now();
    const renew = now - owned.renewedAt >= this.bounds.ttlMs / 4;
    const append = this.ctx.store.streams.append(owned, text, this.bounds, publication, renew);
    owned.appends.add(append);
    try {
      result = await append;
    } catch (err) {
      // The delta may not be recorded: the stream ends `error`, with the text shared state holds.
      this.failed(owned);
      throw err;
    } finally {
      owned.appends.delete(append);
    }
    if (!result.ok) {
      if (result.reason === 'too-large') {
        owned.bytes -= size;
        return errorAck('PAYLOAD_TOO_LARGE');
      }
      this.forget(owned);
      return errorAck('STREAM_NOT_FOUND');
    }
    owned.seq = result.seq;
    owned.lastDeltaAt = Date.now();
    if (renew) owned.renewedAt = now;
    const clients = this.nsp.client;
    const here = clients.adapter.rooms.get(room)?.size ?? 0;
    // Published with the append, to this replica's sockets too (see roomBroadcastEncoder).
    if (publication === null) clients.to(room).emit(Events.messageDelta, { id, seq: result.seq, text });
    if (here > 0) this.deltasOut.add(here);
    this.handoff?.feed.stream(owned.agentId, owned.clientId, Events.messageDelta, { id, seq: result.seq, text });
    return { ok: true, seq: result.seq };
  }

  async end(socket: Socket, payload: StreamEnd): Promise<SendAck> {
    const owned = this.ownedBy(socket, payload.id);
    if (!owned) return errorAck('STREAM_NOT_FOUND');
    const { config } = this.ctx;
    if (payload.text !== undefined && Buffer.byteLength(payload.text) > config.STREAM_MAX_BYTES) return errorAck('PAYLOAD_TOO_LARGE');
    const tooLarge = payloadError('', payload.data, config.MAX_MESSAGE_BYTES);
    if (tooLarge) return errorAck(tooLarge);
    const ending: StreamEnding = { status: payload.status ?? 'complete' };
    if (payload.text !== undefined) ending.text = payload.text;
    if (payload.data !== undefined) ending.data = payload.data;
    // The end is acked ok only with every delta before it recorded: deltas still on their way to
    // shared state are waited for, and one that failed ends the stream `error` instead.
    owned.ending = true;
    if (owned.appends.size > 0) await Promise.allSettled([...owned.appends]);
    if (owned.failed) return errorAck('SERVER_UNAVAILABLE');
    if (this.owned.get(owned.id) !== owned) return errorAck('STREAM_NOT_FOUND');
    const ended = await this.ctx.store.streams.end(owned.agentId, owned.id, ending, this.logged, this.endPublication);
    this.forget(owned);
    // Out of the orphan set now, rather than by a sweep ending it again once its promise lapsed.
    void this.ctx.store.streams.forget([{ agentId: owned.agentId, id: owned.id }]).catch(() => {});
    if (!ended) return errorAck('STREAM_NOT_FOUND');
    this.announceEnd(owned, ended.final, ending.status, ended.published);
    return { ok: true, id: owned.id, ts: owned.start.ts };
  }

  /** The runtime socket left: its open streams end `interrupted`. */
  socketLeft(socketId: string): void {
    const mine = this.sockets.get(socketId);
    this.sockets.delete(socketId);
    for (const id of mine?.ids ?? []) {
      const owned = this.owned.get(id);
      if (owned) void this.hubEnd(owned, 'interrupted');
    }
  }

  /** The open streams of a conversation, as `message:start` gives them to a (re)connecting client. */
  async snapshot(agentId: string, clientId: string): Promise<MessageStart[]> {
    const open = await this.ctx.store.streams.openOf(agentId, clientId);
    return open.map(startOf);
  }

  /** An open stream of the bot, from shared state. */
  find(agentId: string, id: string): Promise<OpenStream | null> {
    return this.ctx.store.streams.get(agentId, id);
  }

  /** After a stop: the hub ends the stream `cancelled` unless it ended within STREAM_STOP_GRACE_MS. */
  cancelAfterGrace(ref: StreamRef): void {
    const grace: Deadline = {
      dueMs: 0,
      slot: -1,
      fire: () => {
        this.graces.delete(grace);
        const owned = this.owned.get(ref.id);
        void this.hubEnd(owned ?? ref, 'cancelled').then((ended) => {
          if (ended) this.ctx.metrics.streamStops.inc({ result: 'ended_by_hub' });
        });
      },
    };
    this.graces.add(grace);
    this.deadlines.add(grace, Date.now() + this.ctx.config.STREAM_STOP_GRACE_MS);
  }

  /** An owned stream's deadline: idle or too long, it ends `timeout`; else it waits for the next. */
  private due(owned: Owned): void {
    const now = Date.now();
    const idleAt = owned.lastDeltaAt + this.ctx.config.STREAM_IDLE_TIMEOUT_MS;
    if (now < idleAt && now < owned.endsBy) {
      this.deadlines.add(owned, Math.min(idleAt, owned.endsBy));
      return;
    }
    void this.hubEnd(owned, 'timeout');
  }

  /**
   * Ends a stream from the hub with the text accumulated so far; true when this call ended it. When
   * shared state is unreachable, the end is retried by the sweep.
   */
  private async hubEnd(ref: StreamRef | Owned, status: StreamStatus): Promise<boolean> {
    const owned = this.owned.get(ref.id);
    if (owned) this.forget(owned);
    try {
      const ended = await this.ctx.store.streams.end(ref.agentId, ref.id, { status }, this.logged, this.endPublication);
      this.pendingEnds.delete(ref.id);
      void this.ctx.store.streams.forget([ref]).catch(() => {});
      if (!ended) return false;
      this.announceEnd({ agentId: ref.agentId, clientId: ended.clientId }, ended.final, status, ended.published);
      return true;
    } catch (err) {
      this.ctx.handlerFailures.warn('stream-end', err, 'could not end a stream in shared state; retrying');
      this.pendingEnds.set(ref.id, { agentId: ref.agentId, id: ref.id, status });
      return false;
    }
  }

  /**
   * What `message:end` to the user's room is published as, by the store in the same step as the
   * end marker (null where it cannot: a Redis Cluster, or one replica). A tab's resume point moves to
   * the marker with it, so it must reach the tab after everything logged before the marker and never
   * before the marker is logged (docs/streaming.md, "Redis unreachable").
   */
  private readonly endPublication = (agentId: string, clientId: string): DeltaPublication | null =>
    this.ctx.publicationTo(Rooms.client(agentId, clientId), Events.messageEnd);

  /** The stream ended in the store: its `message:end` (unless the store published it), metrics, activity. */
  private announceEnd(to: { agentId: string; clientId: string }, final: LoggedMessage, status: StreamStatus, published: boolean): void {
    const end: MessageEnd = { ...(final as Omit<MessageEnd, 'status'>), author: 'agent', status };
    if (!published) this.nsp.client.to(Rooms.client(to.agentId, to.clientId)).emit(Events.messageEnd, end);
    this.handoff?.feed.stream(to.agentId, to.clientId, Events.messageEnd, end);
    this.ctx.metrics.streamsEnded.inc({ status });
    this.activity.reached(to.agentId, to.clientId);
  }

  /**
   * A delta could not be recorded (or may not have been): the stream ends `error`. The clients are
   * told once the store has ended it, with the text it holds (the failed append may still have run),
   * by the sweep's retries of the end until shared state answers.
   */
  private failed(owned: Owned): void {
    owned.failed = true;
    this.forget(owned);
    this.pendingEnds.set(owned.id, { agentId: owned.agentId, id: owned.id, status: 'error' });
  }

  private forget(owned: Owned): void {
    if (!this.owned.delete(owned.id)) return;
    this.deadlines.remove(owned);
    this.sockets.get(owned.socketId)?.ids.delete(owned.id);
    this.ctx.metrics.streamsOpen.dec();
  }

  private ownedBy(socket: Socket, id: string): Owned | undefined {
    const owned = this.owned.get(id);
    return owned?.socketId === socket.id ? owned : undefined;
  }

  private streamsOf(socketId: string): SocketStreams {
    let mine = this.sockets.get(socketId);
    if (!mine) {
      const { config } = this.ctx;
      mine = { ids: new Set(), bucket: new TokenBucket(config.STREAM_DELTA_RATE_PER_S, config.STREAM_DELTA_RATE_BURST) };
      this.sockets.set(socketId, mine);
    }
    return mine;
  }

  /** Renews the promise that these streams' owner is alive; a failed renewal is retried by the next sweep. */
  private keepAlive(streams: readonly Owned[]): void {
    const until = Date.now() + this.promiseMs;
    void this.ctx.store.streams
      .keepAlive(
        streams.map(({ agentId, id }) => ({ agentId, id })),
        until,
      )
      .then(
        () => {
          for (const owned of streams) owned.promisedUntil = until;
        },
        () => {},
      );
  }

  /** One sweep: keep ours alive, end dead replicas' streams (`interrupted`: their runtimes are gone), retry ends. */
  private async tick(): Promise<void> {
    // A promise is renewed when half of it is left (at least three sweeps' worth, so a late sweep cannot
    // let it lapse), not at every sweep: with many open streams, one command for the few that are due.
    const now = Date.now();
    const renewBelow = Math.max(this.promiseMs / 2, 3 * this.sweepMs);
    const due: Owned[] = [];
    for (const owned of this.owned.values()) if (owned.promisedUntil - now < renewBelow) due.push(owned);
    if (due.length > 0) this.keepAlive(due);
    // Failed ends are retried together, one round at a time: while Redis hangs (a partition) each
    // takes up to the command timeout, and rounds must not pile up or hold back the renewals above.
    if (!this.retrying && this.pendingEnds.size > 0) {
      this.retrying = true;
      void Promise.all([...this.pendingEnds.values()].map((pending) => this.hubEnd(pending, pending.status))).finally(
        () => (this.retrying = false),
      );
    }
    try {
      const orphans = await this.ctx.store.streams.orphans(Date.now(), 100);
      for (const ref of orphans) if (!this.owned.has(ref.id)) await this.hubEnd(ref, 'interrupted');
    } catch {
      // Shared state unreachable: the next sweep tries again.
    }
  }
}

/** `message:start` of an open stream: the start message with the text so far and its seq. */
function startOf(open: OpenStream): MessageStart {
  return { ...(open.message as MessageStart), text: open.text, seq: open.seq };
}
