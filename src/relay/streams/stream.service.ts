import type { Socket } from 'socket.io';
import { TokenBucket } from '../../limits/token-bucket';
import { jsonBytes, payloadError } from '../../protocol/payload-limits';
import { checkContent, contentOf, partChangeError, partsError } from '../../protocol/part-checks';
import type { Tally } from '../../metrics/metrics';
import {
  applyPartChange,
  BROADCAST_TO,
  botMessage,
  defaultDeltaIndex,
  errorAck,
  Events,
  messageEnd,
  messageStart,
  partsOf,
  type MessagePart,
  type MessagePartEvent,
  type MessageStart,
  type PartChange,
  type SendAck,
  type StreamDelta,
  type StreamDeltaAck,
  type StreamEnd,
  type StreamPart,
  type StreamPartAck,
  type StreamStart,
  type StreamStatus,
  type StreamUpdate,
} from '../../protocol';
import type { LoggedMessage } from '../../store/conversation-log';
import { encodeChange } from '../../store/stream-changes';
import type {
  ChangeFrame,
  DeltaPublication,
  OpenStream,
  StreamBounds,
  StreamEnding,
  StreamRef,
  StreamTarget,
} from '../../store/stream-store';
import { DeadlineQueue, type Deadline } from '../deadline-queue';
import { MessageStamper } from '../ids';
import type { RelayContext, RelayNamespaces } from '../relay.context';
import { Rooms } from '../rooms';
import { DeliveryBudgetError, type DeliveryBudget } from '../delivery-budget';
import { ConversationHeldError } from '../../store/control-store';
import { QuotaExceededError } from '../../store/bot-quota';
import type { ActivityTracker } from './activity-tracker';
import { TurnQueue } from './turn-queue';

const THROTTLED =
  "a change of this stream was refused for the bot's delivery budget (AGENT_DELIVERY_RATE_PER_S): later ones are refused too; end the stream";
import type { ConsoleFeed } from '../handoff/console-feed';
import type { ConversationControl } from '../handoff/conversation-control';

/** The handoff's parts a stream answers to (docs/handoff.md): refused while an operator holds the conversation, followed by consoles. */
export interface StreamHandoff {
  control: ConversationControl;
  feed: ConsoleFeed;
}

/** A stream owned by a runtime socket of this replica (the target of its deltas in the store). */
interface Owned extends Deadline, StreamTarget {
  /** The user's room, and what other replicas get of a delta or a part to it (null: emitted through the adapter). */
  room: string;
  publication: DeltaPublication | null;
  partPublication: DeltaPublication | null;
  /** The JSON of its changes' events up to their seq: `{"id":…,"seq":`. */
  frameHead: string;
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
  /** Ends run one a turn: each costs its text (building, logging and sending the final). */
  private readonly endTurns = new TurnQueue();
  private readonly bounds: StreamBounds;
  private readonly deltasIn: Tally;
  private readonly deltasOut: Tally;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly activity: ActivityTracker,
    /** The bot's delivery budget: starts and deltas are refused past it, ends paid for. */
    private readonly deliveries: DeliveryBudget,
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
    const checked = checkContent({ text: '', data: payload.data, parts: payload.parts }, this.contentLimits, 'agent');
    if (!('content' in checked)) return errorAck(checked.code, checked.message);
    const mine = this.streamsOf(socket.id);
    if (mine.ids.size >= config.STREAM_MAX_OPEN) return errorAck('STREAM_LIMIT');
    const overBudget = this.overBudget(agentId, payload.to);
    if (overBudget) return overBudget;
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
      partPublication: this.ctx.publicationTo(room, Events.messagePart),
      frameHead: `{"id":${JSON.stringify(id)},"seq":`,
      parts: partsOf(start).map(withoutText),
      socketId: socket.id,
      start,
      bytes: start.parts === undefined ? 0 : jsonBytes(start.parts),
      seq: 0,
      appends: new Set(),
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
      void this.hubEnd(owned, 'interrupted');
      return { ok: true, id, ts };
    }
    this.owned.set(id, owned);
    this.deadlines.add(owned, Math.min(now + config.STREAM_IDLE_TIMEOUT_MS, owned.endsBy));
    this.keepAlive([owned]);
    metrics.streamsStarted.inc();
    metrics.streamsOpen.inc();
    this.activity.reached(agentId, payload.to);
    const started = messageStart(start, start.text, partsOf(start), 0);
    this.nsp.client.to(room).emit(Events.messageStart, started);
    this.handoff?.feed.stream(agentId, payload.to, Events.messageStart, started);
    return { ok: true, id, ts };
  }

  /** The bounds of a message's content (a stream's start, its end's data). */
  private get contentLimits() {
    return { maxBytes: this.ctx.config.MAX_MESSAGE_BYTES, maxParts: this.ctx.config.MESSAGE_MAX_PARTS };
  }

  async delta(socket: Socket, { id, text, index }: StreamDelta): Promise<StreamDeltaAck> {
    const owned = this.ownedBy(socket, id);
    if (!owned || owned.ending) return errorAck('STREAM_NOT_FOUND');
    this.deltasIn.add();
    const at = index ?? defaultDeltaIndex(owned.parts);
    const change: PartChange = { kind: 'delta', index: at, text };
    const invalid = partChangeError(owned.parts, change, this.ctx.config.MESSAGE_MAX_PARTS);
    if (invalid) return errorAck('INVALID_PAYLOAD', invalid);
    const frame = owned.publication === null ? null : { head: owned.frameHead, tail: `,"text":${JSON.stringify(text)},"index":${at}}` };
    const result = await this.change(owned, change, Buffer.byteLength(text), owned.publication, frame);
    if (!result.ok) return result;
    const clients = this.nsp.client;
    const here = clients.adapter.rooms.get(owned.room)?.size ?? 0;
    // Published with the append, to this replica's sockets too (see roomBroadcastEncoder).
    if (owned.publication === null) clients.to(owned.room).emit(Events.messageDelta, { id, seq: result.seq, text, index: at });
    if (here > 0) this.deltasOut.add(here);
    this.handoff?.feed.stream(owned.agentId, owned.clientId, Events.messageDelta, { id, seq: result.seq, text, index: at });
    return { ok: true, seq: result.seq };
  }

  /** A new part of an open stream (docs/parts.md); acked with its seq and index. */
  async part(socket: Socket, { id, part }: StreamPart): Promise<StreamPartAck> {
    const owned = this.ownedBy(socket, id);
    if (!owned || owned.ending) return errorAck('STREAM_NOT_FOUND');
    const change: PartChange = { kind: 'part', part };
    const invalid = partChangeError(owned.parts, change, this.ctx.config.MESSAGE_MAX_PARTS);
    if (invalid) return errorAck('INVALID_PAYLOAD', invalid);
    const index = owned.parts.length;
    const result = await this.change(owned, change, jsonBytes(part), owned.partPublication, this.partFrame(owned, index, part));
    if (!result.ok) return result;
    if (owned.partPublication === null) this.emitPart(owned.room, { id, seq: result.seq, index, part });
    this.handoff?.feed.stream(owned.agentId, owned.clientId, Events.messagePart, { id, seq: result.seq, index, part });
    return { ok: true, seq: result.seq, index };
  }

  /**
   * Merges fields into a part of an open stream. The whole part goes to the clients: a text or
   * reasoning part's update must give its `text` (the hub keeps no copy of the text it streamed).
   */
  async update(socket: Socket, { id, index, part: patch }: StreamUpdate): Promise<StreamDeltaAck> {
    const owned = this.ownedBy(socket, id);
    if (!owned || owned.ending) return errorAck('STREAM_NOT_FOUND');
    const change: PartChange = { kind: 'update', index, patch };
    // A user's decision may have been recorded on another replica: the part as shared state holds it.
    const asked = owned.parts[index];
    if (asked?.type === 'tool' && asked.state === 'approval-requested') {
      const fresh = (await this.ctx.store.streams.get(owned.agentId, id))?.parts[index];
      if (fresh?.type === 'tool' && this.owned.get(id) === owned) owned.parts[index] = fresh;
    }
    const invalid = partChangeError(owned.parts, change, this.ctx.config.MESSAGE_MAX_PARTS);
    if (invalid) return errorAck('INVALID_PAYLOAD', invalid);
    const held = owned.parts[index];
    if ((held.type === 'text' || held.type === 'reasoning') && typeof patch.text !== 'string') {
      return errorAck('INVALID_PAYLOAD', `part (index ${index}).text: an update of a ${held.type} part gives its whole text`);
    }
    const merged = { ...held, ...patch, type: held.type } as MessagePart;
    const result = await this.change(owned, change, jsonBytes(patch), owned.partPublication, this.partFrame(owned, index, merged));
    if (!result.ok) return result;
    if (owned.partPublication === null) this.emitPart(owned.room, { id, seq: result.seq, index, part: merged });
    this.handoff?.feed.stream(owned.agentId, owned.clientId, Events.messagePart, { id, seq: result.seq, index, part: merged });
    return { ok: true, seq: result.seq };
  }

  /** `message:part` as JSON around its seq, when it is published by the store. */
  private partFrame(owned: Owned, index: number, part: MessagePart): ChangeFrame | null {
    return owned.partPublication === null ? null : { head: owned.frameHead, tail: `,"index":${index},"part":${JSON.stringify(part)}}` };
  }

  private emitPart(room: string, event: MessagePartEvent): void {
    this.nsp.client.to(room).emit(Events.messagePart, event);
  }

  /**
   * Records one checked change of an owned stream in shared state, within STREAM_MAX_BYTES, and
   * applies it to the runtime's view of the parts: its seq, or the error ack.
   */
  private async change(
    owned: Owned,
    change: PartChange,
    bytes: number,
    publication: DeltaPublication | null,
    frame: ChangeFrame | null,
  ): Promise<{ ok: true; seq: number } | ReturnType<typeof errorAck>> {
    // The store refuses a change past the limit too; refused here, it costs shared state nothing.
    if (owned.bytes + bytes > this.bounds.maxBytes) return errorAck('PAYLOAD_TOO_LARGE');
    if (owned.throttled) return errorAck('RATE_LIMITED', THROTTLED);
    const overBudget = this.overBudget(owned.agentId, owned.clientId);
    if (overBudget) {
      owned.throttled = true;
      return overBudget;
    }
    owned.bytes += bytes;
    let result;
    // Expiry is renewed once a quarter of it has passed, not by every delta: it then stays at least
    // 1.5 idle timeouts + 45 s ahead of the last delta, more than the idle timeout that ends the stream.
    const now = Date.now();
    const renew = now - owned.renewedAt >= this.bounds.ttlMs / 4;
    const append = this.ctx.store.streams.append(owned, { record: encodeChange(change), bytes }, this.bounds, publication, frame, renew);
    owned.appends.add(append);
    try {
      result = await append;
    } catch (err) {
      // The change may not be recorded: the stream ends `error`, with what shared state holds.
      this.failed(owned);
      throw err;
    } finally {
      owned.appends.delete(append);
    }
    if (!result.ok) {
      if (result.reason === 'too-large' || result.reason === 'quota') {
        owned.bytes -= bytes;
        if (result.reason === 'quota') this.ctx.metrics.quotaExceeded.inc({ limit: 'bytes' });
        return errorAck(result.reason === 'quota' ? 'QUOTA_EXCEEDED' : 'PAYLOAD_TOO_LARGE');
      }
      this.forget(owned);
      return errorAck('STREAM_NOT_FOUND');
    }
    // Text is not kept here, only what the next changes are checked against (and a tool's input).
    if (change.kind === 'delta') {
      if (owned.parts[change.index]?.type === 'tool') applyPartChange(owned.parts, change);
      else if (change.index === owned.parts.length) owned.parts.push({ type: 'text', text: '' });
    } else applyPartChange(owned.parts, change.kind === 'part' ? { kind: 'part', part: withoutText(change.part) } : change);
    owned.seq = result.seq;
    owned.lastDeltaAt = Date.now();
    if (renew) owned.renewedAt = now;
    return { ok: true, seq: result.seq };
  }

  /**
   * Applies a user's approval decision to part `index` of an open stream, on whatever replica owns
   * it: its seq, or null when the stream is no longer open.
   */
  async decideInStream(ref: StreamTarget, index: number, part: MessagePart): Promise<number | null> {
    const room = Rooms.client(ref.agentId, ref.clientId);
    const publication = this.ctx.publicationTo(room, Events.messagePart);
    const patch = { state: (part as { state?: string }).state, approval: (part as { approval?: unknown }).approval };
    const frame =
      publication === null
        ? null
        : { head: `{"id":${JSON.stringify(ref.id)},"seq":`, tail: `,"index":${index},"part":${JSON.stringify(part)}}` };
    const target: StreamTarget = { agentId: ref.agentId, id: ref.id, clientId: ref.clientId };
    const change: PartChange = { kind: 'update', index, patch };
    const result = await this.ctx.store.streams.append(
      target,
      { record: encodeChange(change), bytes: 0 },
      this.bounds,
      publication,
      frame,
      false,
    );
    if (!result.ok) return null;
    const owned = this.owned.get(ref.id);
    if (owned?.parts[index]) applyPartChange(owned.parts, change);
    if (publication === null) this.emitPart(room, { id: ref.id, seq: result.seq, index, part });
    return result.seq;
  }

  async end(socket: Socket, payload: StreamEnd): Promise<SendAck> {
    const owned = this.ownedBy(socket, payload.id);
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
    if (owned.appends.size > 0) await Promise.allSettled([...owned.appends]);
    await this.endTurns.next();
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

  /** A RATE_LIMITED ack when the bot's delivery budget cannot pay for an event to `clientId`'s sockets; else null, paid. */
  private overBudget(agentId: string, clientId: string): (SendAck & { ok: false }) | null {
    try {
      this.deliveries.charge(agentId, clientId);
      return null;
    } catch (err) {
      if (err instanceof DeliveryBudgetError) return errorAck('RATE_LIMITED', err.message);
      throw err;
    }
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
    this.ctx.publicationTo(Rooms.client(agentId, clientId), Events.messageEnd);

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
    this.handoff?.feed.stream(to.agentId, to.clientId, Events.messageEnd, ended);
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

/** `message:start` of an open stream: the start message with the text and parts so far and their seq. */
function startOf(open: OpenStream): MessageStart {
  return messageStart(open.message, open.text, open.parts, open.seq);
}

/** A part as the owner keeps it: without the text of a text or reasoning part (the store has it). */
function withoutText(part: MessagePart): MessagePart {
  return part.type === 'text' || part.type === 'reasoning' ? { type: part.type, text: '' } : part;
}
