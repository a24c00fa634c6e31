import type { Socket } from 'socket.io';
import { jsonBytes, payloadError } from '../../protocol/payload-limits';
import { contentOf, partsError } from '../../protocol/part-checks';
import { errorAck, Events, messageEnd, type SendAck, type StreamEnd, type StreamStatus } from '../../protocol';
import type { LoggedMessage } from '../../store/conversation-log';
import type { DeltaPublication, StreamEnding, StreamRef } from '../../store/stream-store';
import type { DeliveryBudget } from '../delivery-budget';
import type { RelayContext, RelayNamespaces } from '../relay.context';
import { Rooms } from '../rooms';
import type { ActivityTracker } from './activity-tracker';
import type { ConsoleFeed } from '../handoff/console-feed';
import type { Owned, OwnedStreams } from './owned-streams';
import { TurnQueue } from './turn-queue';

/**
 * How streams end (docs/streaming.md): by their runtime (`stream:end`, acked once every change
 * before it is recorded), or by the hub (timeout, stop grace, the runtime gone, a change that could
 * not be recorded, a dead replica's orphan). The store's atomic end makes sure one ender wins; an
 * end shared state refused is kept and retried by the sweep ({@link retryPending}).
 */
export class StreamEndings {
  /** Ends the store refused (shared state unreachable): retried by {@link retryPending}. */
  private readonly pendingEnds = new Map<string, StreamRef & { status: StreamStatus }>();
  /** A round of {@link pendingEnds} retries is under way. */
  private retrying = false;
  /** Ends run one a turn: each costs its text (building, logging and sending the final). */
  private readonly endTurns = new TurnQueue();

  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly streams: OwnedStreams,
    private readonly activity: ActivityTracker,
    /** The bot's delivery budget: ends are paid for. */
    private readonly deliveries: DeliveryBudget,
    private readonly feed: ConsoleFeed,
  ) {}

  private get logged(): boolean {
    return this.ctx.config.HISTORY_ENABLED;
  }

  /**
   * An open may still run in Redis with nobody to end the stream: the sweep ends it `error` once
   * Redis answers (nothing, when it never ran).
   */
  endLater(ref: StreamRef, status: StreamStatus): void {
    this.pendingEnds.set(ref.id, { agentId: ref.agentId, id: ref.id, status });
  }

  /**
   * Retries the ends shared state refused, together, one round at a time: while Redis hangs (a
   * partition) each takes up to the command timeout, and rounds must not pile up.
   */
  retryPending(): void {
    if (!this.retrying && this.pendingEnds.size > 0) {
      this.retrying = true;
      void Promise.all([...this.pendingEnds.values()].map((pending) => this.hubEnd(pending, pending.status))).finally(
        () => (this.retrying = false),
      );
    }
  }

  async end(socket: Socket, payload: StreamEnd): Promise<SendAck> {
    const owned = this.streams.ownedBy(socket, payload.id);
    if (!owned) return errorAck('STREAM_NOT_FOUND');
    const { config } = this.ctx;
    if (payload.text !== undefined && Buffer.byteLength(payload.text) > config.STREAM_MAX_BYTES) return errorAck('PAYLOAD_TOO_LARGE');
    const tooLarge = payloadError('', payload.data, config.MAX_MESSAGE_BYTES);
    if (tooLarge) return errorAck(tooLarge);
    const ending: StreamEnding = { status: payload.status ?? 'complete' };
    if (payload.parts !== undefined) {
      const invalid = partsError(payload.parts, config.MESSAGE_MAX_PARTS, 'agent');
      if (invalid) return errorAck('INVALID_PAYLOAD', invalid);
      const content = contentOf(payload.text ?? '', payload.parts);
      if (typeof content === 'string') return errorAck('INVALID_PAYLOAD', content);
      if (jsonBytes(content.parts) > config.STREAM_MAX_BYTES) return errorAck('PAYLOAD_TOO_LARGE');
      ending.parts = content.parts ?? [];
    } else if (payload.text !== undefined) ending.text = payload.text;
    if (payload.data !== undefined) ending.data = payload.data;
    // The end is acked ok only with every delta before it recorded: deltas still on their way to
    // shared state are waited for, and one that failed ends the stream `error` instead.
    owned.ending = true;
    await owned.order.settled();
    if (owned.appends.size > 0) await Promise.allSettled([...owned.appends]);
    await this.endTurns.next();
    if (owned.failed) return errorAck('SERVER_UNAVAILABLE');
    if (this.streams.get(owned.id) !== owned) return errorAck('STREAM_NOT_FOUND');
    const ended = await this.ctx.store.streams.end(owned.agentId, owned.id, ending, this.logged, this.endPublication);
    this.streams.forget(owned);
    // Out of the orphan set now, rather than by a sweep ending it again once its promise lapsed.
    void this.ctx.store.streams.forget([{ agentId: owned.agentId, id: owned.id }]).catch(() => {});
    if (!ended) return errorAck('STREAM_NOT_FOUND');
    this.announceEnd(owned, ended.final, ending.status, ended.published);
    return { ok: true, id: owned.id, ts: owned.start.ts };
  }

  /**
   * Ends a stream from the hub with the text accumulated so far; true when this call ended it. When
   * shared state is unreachable, the end is retried by the sweep.
   */
  async hubEnd(ref: StreamRef | Owned, status: StreamStatus): Promise<boolean> {
    const owned = this.streams.get(ref.id);
    if (owned) this.streams.forget(owned);
    await this.endTurns.next();
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
    this.ctx.frames.end(Rooms.client(agentId, clientId));

  /** The stream ended in the store: its `message:end` (unless the store published it), metrics, activity. */
  private announceEnd(to: { agentId: string; clientId: string }, final: LoggedMessage, status: StreamStatus, published: boolean): void {
    this.deliveries.spend(to.agentId, to.clientId);
    const room = Rooms.client(to.agentId, to.clientId);
    const clients = this.nsp.client;
    const ended = messageEnd(final, status);
    // An emit encodes the whole final even for a room with no socket: on one replica an empty room
    // here is empty everywhere, and the junk users a bot can stream to have no socket at all.
    if (!published && (this.ctx.clustered || (clients.adapter.rooms.get(room)?.size ?? 0) > 0)) {
      clients.to(room).emit(Events.messageEnd, ended);
    }
    this.feed.stream(to.agentId, to.clientId, Events.messageEnd, ended);
    this.ctx.metrics.streamsEnded.inc({ status });
    this.activity.reached(to.agentId, to.clientId);
  }

  /**
   * A delta could not be recorded (or may not have been): the stream ends `error`. The clients are
   * told once the store has ended it, with the text it holds (the failed append may still have run),
   * by the sweep's retries of the end until shared state answers.
   */
  failed(owned: Owned): void {
    owned.failed = true;
    this.streams.forget(owned);
    this.pendingEnds.set(owned.id, { agentId: owned.agentId, id: owned.id, status: 'error' });
  }
}
