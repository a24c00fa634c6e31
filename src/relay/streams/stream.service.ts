import type { Socket } from 'socket.io';
import type { TokenBucket } from '../../limits/token-bucket';
import { jsonBytes } from '../../protocol/payload-limits';
import { checkContent } from '../../protocol/part-checks';
import {
  BROADCAST_TO,
  botMessage,
  errorAck,
  Events,
  messageStart,
  partsOf,
  type MessagePart,
  type MessageStart,
  type SendAck,
  type StreamDelta,
  type StreamDeltaAck,
  type StreamEnd,
  type StreamPart,
  type StreamPartAck,
  type StreamStart,
  type StreamUpdate,
} from '../../protocol';
import type { LoggedMessage } from '../../store/conversation-log';
import type { OpenStream, StreamBounds, StreamRef, StreamTarget } from '../../store/stream-store';
import type { Deadline } from '../deadline-queue';
import { MessageStamper } from '../ids';
import type { RelayContext, RelayNamespaces } from '../relay.context';
import { Rooms } from '../rooms';
import type { DeliveryBudget } from '../delivery-budget';
import { ConversationHeldError } from '../../store/control-store';
import { QuotaExceededError } from '../../store/bot-quota';
import type { ActivityTracker } from './activity-tracker';
import { ChangeOrder } from './change-order';
import type { ConsoleFeed } from '../handoff/console-feed';
import { OwnedStreams, overBudget, withoutText, type Owned } from './owned-streams';
import { StreamChanges } from './stream-changes';
import { StreamEndings } from './stream-endings';

/**
 * Streamed replies on the hub (docs/streaming.md). A stream belongs to the runtime socket that
 * started it: only that socket's events reach it here, and the store's atomic end makes sure one
 * ender wins when a replica's timeout, a stop grace and the orphan sweep race. Deltas go to the
 * user's room at once, published by the store with the append where it can (one round trip).
 * Opening streams and the sweep are here; their changes are {@link StreamChanges}', their ends
 * {@link StreamEndings}'.
 */
export class StreamService {
  private readonly streams: OwnedStreams;
  private readonly changes: StreamChanges;
  private readonly endings: StreamEndings;
  private readonly graces = new Set<Deadline>();
  private readonly stamps = new MessageStamper();
  private readonly bounds: StreamBounds;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly activity: ActivityTracker,
    /** The bot's delivery budget: starts and deltas are refused past it, ends paid for. */
    private readonly deliveries: DeliveryBudget,
    readonly feed: ConsoleFeed,
  ) {
    const { config } = ctx;
    // A stream's shared state outlives its idle timeout, so the timeout (or the orphan sweep) ends it, not expiry.
    this.bounds = { maxBytes: config.STREAM_MAX_BYTES, ttlMs: 2 * config.STREAM_IDLE_TIMEOUT_MS + 60_000 };
    this.streams = new OwnedStreams(ctx);
    this.endings = new StreamEndings(ctx, nsp, this.streams, activity, deliveries, feed);
    this.changes = new StreamChanges(
      ctx,
      nsp,
      this.streams,
      this.bounds,
      deliveries,
      (owned) => this.endings.failed(owned),
      ctx.metrics.streamDeltas.bind({ direction: 'in' }),
      ctx.metrics.streamDeltas.bind({ direction: 'out' }),
      feed,
    );
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
    this.streams.clearDeadlines();
    for (const grace of this.graces) this.streams.deadlines.remove(grace);
    this.graces.clear();
  }

  /** The delta bucket of a runtime socket. */
  bucketOf(socketId: string): TokenBucket {
    return this.streams.streamsOf(socketId).bucket;
  }

  async start(socket: Socket, agentId: string, payload: StreamStart): Promise<SendAck> {
    const { config, metrics } = this.ctx;
    if (payload.to === BROADCAST_TO) return errorAck('INVALID_PAYLOAD', "a stream goes to one user: '*' is refused");
    const checked = checkContent({ text: '', data: payload.data, parts: payload.parts }, this.contentLimits, 'agent');
    if (!('content' in checked)) return errorAck(checked.code, checked.message);
    const mine = this.streams.streamsOf(socket.id);
    if (mine.ids.size >= config.STREAM_MAX_OPEN) return errorAck('STREAM_LIMIT');
    const refused = overBudget(this.deliveries, agentId, payload.to);
    if (refused) return refused;
    const { id, ts } = this.stamps.next();
    const start: LoggedMessage = botMessage({ id, ts, agentId }, checked.content, payload.replyTo);
    // Counted before the write, so a concurrent start cannot pass the limit while this one awaits.
    mine.ids.add(id);
    try {
      await this.ctx.store.streams.open({ message: start, clientId: payload.to, owner: socket.id }, this.bounds, this.logged);
    } catch (err) {
      mine.ids.delete(id);
      // A stream that opens while an operator holds the conversation never reaches the user: the
      // open reads who answers in the same step and writes nothing then.
      if (err instanceof ConversationHeldError) return errorAck('CONVERSATION_HELD');
      // Refused by the bot's quota: nothing was written.
      if (err instanceof QuotaExceededError) {
        metrics.quotaExceeded.inc({ limit: err.limit });
        return errorAck('QUOTA_EXCEEDED', err.message);
      }
      // The open may still run in Redis (a timeout, a connection lost with it), with nobody to end
      // the stream: the sweep ends it `error` once Redis answers (nothing, when it never ran).
      this.endings.endLater({ agentId, id }, 'error');
      throw err;
    }
    const now = Date.now();
    const room = Rooms.client(agentId, payload.to);
    const owned: Owned = {
      agentId,
      id,
      clientId: payload.to,
      room,
      deltaFrames: this.ctx.frames.delta(room, id),
      partFrames: this.ctx.frames.part(room, id),
      parts: partsOf(start).map(withoutText),
      socketId: socket.id,
      start,
      bytes: start.parts === undefined ? 0 : jsonBytes(start.parts),
      seq: 0,
      appends: new Set(),
      order: new ChangeOrder(),
      ending: false,
      failed: false,
      throttled: false,
      lastDeltaAt: now,
      renewedAt: now,
      promisedUntil: 0,
      endsBy: now + config.STREAM_MAX_DURATION_MS,
      dueMs: 0,
      slot: -1,
      fire: () => this.due(owned),
    };
    if (!socket.connected) {
      // The runtime left while the stream was being opened: it will not end it.
      mine.ids.delete(id);
      void this.endings.hubEnd(owned, 'interrupted');
      return { ok: true, id, ts };
    }
    this.streams.add(owned, Math.min(now + config.STREAM_IDLE_TIMEOUT_MS, owned.endsBy));
    this.keepAlive([owned]);
    metrics.streamsStarted.inc();
    metrics.streamsOpen.inc();
    this.activity.reached(agentId, payload.to);
    const started = messageStart(start, start.text, partsOf(start), 0);
    this.nsp.client.to(room).emit(Events.messageStart, started);
    this.feed.stream(agentId, payload.to, Events.messageStart, started);
    return { ok: true, id, ts };
  }

  /** The bounds of a message's content (a stream's start, its end's data). */
  private get contentLimits() {
    return { maxBytes: this.ctx.config.MAX_MESSAGE_BYTES, maxParts: this.ctx.config.MESSAGE_MAX_PARTS };
  }

  delta(socket: Socket, payload: StreamDelta): Promise<StreamDeltaAck> {
    return this.changes.delta(socket, payload);
  }

  /** A new part of an open stream (docs/parts.md); acked with its seq and index. */
  part(socket: Socket, payload: StreamPart): Promise<StreamPartAck> {
    return this.changes.part(socket, payload);
  }

  /** Merges fields into a part of an open stream (see {@link StreamChanges.update}). */
  update(socket: Socket, payload: StreamUpdate): Promise<StreamDeltaAck> {
    return this.changes.update(socket, payload);
  }

  /**
   * Applies a user's approval decision to part `index` of an open stream, on whatever replica owns
   * it: its seq, or null when the stream is no longer open.
   */
  decideInStream(ref: StreamTarget, index: number, part: MessagePart): Promise<number | null> {
    return this.changes.decideInStream(ref, index, part);
  }

  end(socket: Socket, payload: StreamEnd): Promise<SendAck> {
    return this.endings.end(socket, payload);
  }

  /** The runtime socket left: its open streams end `interrupted`. */
  socketLeft(socketId: string): void {
    for (const owned of this.streams.socketLeft(socketId)) void this.endings.hubEnd(owned, 'interrupted');
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
        const owned = this.streams.get(ref.id);
        void this.endings.hubEnd(owned ?? ref, 'cancelled').then((ended) => {
          if (ended) this.ctx.metrics.streamStops.inc({ result: 'ended_by_hub' });
        });
      },
    };
    this.graces.add(grace);
    this.streams.deadlines.add(grace, Date.now() + this.ctx.config.STREAM_STOP_GRACE_MS);
  }

  /** An owned stream's deadline: idle or too long, it ends `timeout`; else it waits for the next. */
  private due(owned: Owned): void {
    const now = Date.now();
    const idleAt = owned.lastDeltaAt + this.ctx.config.STREAM_IDLE_TIMEOUT_MS;
    if (now < idleAt && now < owned.endsBy) {
      this.streams.deadlines.add(owned, Math.min(idleAt, owned.endsBy));
      return;
    }
    void this.endings.hubEnd(owned, 'timeout');
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
    for (const owned of this.streams.values()) if (owned.promisedUntil - now < renewBelow) due.push(owned);
    if (due.length > 0) this.keepAlive(due);
    // Failed ends are retried without holding back the renewals above.
    this.endings.retryPending();
    try {
      const orphans = await this.ctx.store.streams.orphans(Date.now(), 100);
      for (const ref of orphans) if (!this.streams.has(ref.id)) await this.endings.hubEnd(ref, 'interrupted');
    } catch {
      // Shared state unreachable: the next sweep tries again.
    }
  }
}

/** `message:start` of an open stream: the start message with the text and parts so far and their seq. */
function startOf(open: OpenStream): MessageStart {
  return messageStart(open.message, open.text, open.parts, open.seq);
}
