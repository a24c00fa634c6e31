import type { Socket } from 'socket.io';
import type { Tally } from '../../metrics/metrics';
import { jsonBytes } from '../../protocol/payload-limits';
import { partChangeError } from '../../protocol/part-checks';
import {
  applyPartChange,
  defaultDeltaIndex,
  errorAck,
  Events,
  type MessagePart,
  type MessagePartEvent,
  type PartChange,
  type StreamDelta,
  type StreamDeltaAck,
  type StreamPart,
  type StreamPartAck,
  type StreamUpdate,
} from '../../protocol';
import { encodeChange } from '../../store/stream-changes';
import type { ChangeFrame, DeltaPublication, StreamBounds, StreamTarget } from '../../store/stream-store';
import type { DeliveryBudget } from '../delivery-budget';
import type { RelayContext, RelayNamespaces } from '../relay.context';
import { Rooms } from '../rooms';
import type { ConsoleFeed } from '../handoff/console-feed';
import { overBudget, withoutText, type Owned, type OwnedStreams } from './owned-streams';

const THROTTLED =
  "a change of this stream was refused for the bot's delivery budget (AGENT_DELIVERY_RATE_PER_S): later ones are refused too; end the stream";

/**
 * The changes a runtime makes to the streams it owns (docs/parts.md, "Streams"): text deltas, new
 * parts and updates, each checked against the parts the changes before it make (change-order.ts),
 * recorded in shared state within STREAM_MAX_BYTES and sent to the user's room, published by the
 * store with the append where it can (one round trip); and a user's decision on one of its parts.
 */
export class StreamChanges {
  constructor(
    private readonly ctx: RelayContext,
    private readonly nsp: RelayNamespaces,
    private readonly streams: OwnedStreams,
    private readonly bounds: StreamBounds,
    /** The bot's delivery budget: changes are refused past it. */
    private readonly deliveries: DeliveryBudget,
    /** A change could not be recorded (or may not have been): the stream ends `error`. */
    private readonly onFailed: (owned: Owned) => void,
    private readonly deltasIn: Tally,
    private readonly deltasOut: Tally,
    private readonly feed: ConsoleFeed,
  ) {}

  async delta(socket: Socket, { id, text, index }: StreamDelta): Promise<StreamDeltaAck> {
    const owned = this.streams.ownedBy(socket, id);
    if (!owned || owned.ending) return errorAck('STREAM_NOT_FOUND');
    this.deltasIn.add();
    return owned.order.turn(() => {
      if (this.streams.get(id) !== owned) return Promise.resolve(errorAck('STREAM_NOT_FOUND'));
      const at = index ?? defaultDeltaIndex(owned.parts);
      // A delta that opens a text part reshapes the parts; one to a part that exists does not.
      if (at === owned.parts.length) return owned.order.reshaping(() => this.deltaAt(owned, text, at));
      return this.deltaAt(owned, text, at);
    });
  }

  private async deltaAt(owned: Owned, text: string, at: number): Promise<StreamDeltaAck> {
    const { id } = owned;
    const change: PartChange = { kind: 'delta', index: at, text };
    const invalid = partChangeError(owned.parts, change, this.ctx.config.MESSAGE_MAX_PARTS);
    if (invalid) return errorAck('INVALID_PAYLOAD', invalid);
    const frames = owned.deltaFrames;
    const result = await this.change(owned, change, Buffer.byteLength(text), frames?.publication ?? null, frames?.around(text, at) ?? null);
    if (!result.ok) return result;
    const clients = this.nsp.client;
    const here = clients.adapter.rooms.get(owned.room)?.size ?? 0;
    // Published with the append, to this replica's sockets too (see RoomFrames in cluster/frames.ts).
    if (frames === null) clients.to(owned.room).emit(Events.messageDelta, { id, seq: result.seq, text, index: at });
    if (here > 0) this.deltasOut.add(here);
    this.feed.stream(owned.agentId, owned.clientId, Events.messageDelta, { id, seq: result.seq, text, index: at });
    return { ok: true, seq: result.seq };
  }

  /** A new part of an open stream (docs/parts.md); acked with its seq and index. */
  async part(socket: Socket, { id, part }: StreamPart): Promise<StreamPartAck> {
    const owned = this.streams.ownedBy(socket, id);
    if (!owned || owned.ending) return errorAck('STREAM_NOT_FOUND');
    return owned.order.turn(() => owned.order.reshaping(() => this.partOf(owned, part)));
  }

  private async partOf(owned: Owned, part: MessagePart): Promise<StreamPartAck> {
    const { id } = owned;
    if (this.streams.get(id) !== owned) return errorAck('STREAM_NOT_FOUND');
    const change: PartChange = { kind: 'part', part };
    const invalid = partChangeError(owned.parts, change, this.ctx.config.MESSAGE_MAX_PARTS);
    if (invalid) return errorAck('INVALID_PAYLOAD', invalid);
    const index = owned.parts.length;
    const frames = owned.partFrames;
    const result = await this.change(owned, change, jsonBytes(part), frames?.publication ?? null, frames?.around(index, part) ?? null);
    if (!result.ok) return result;
    if (frames === null) this.emitPart(owned.room, { id, seq: result.seq, index, part });
    this.feed.stream(owned.agentId, owned.clientId, Events.messagePart, { id, seq: result.seq, index, part });
    return { ok: true, seq: result.seq, index };
  }

  /**
   * Merges fields into a part of an open stream. The whole part goes to the clients: a text or
   * reasoning part's update must give its `text` (the hub keeps no copy of the text it streamed).
   */
  async update(socket: Socket, { id, index, part: patch }: StreamUpdate): Promise<StreamDeltaAck> {
    const owned = this.streams.ownedBy(socket, id);
    if (!owned || owned.ending) return errorAck('STREAM_NOT_FOUND');
    return owned.order.turn(() => owned.order.reshaping(() => this.updateOf(owned, index, patch)));
  }

  private async updateOf(owned: Owned, index: number, patch: StreamUpdate['part']): Promise<StreamDeltaAck> {
    const { id } = owned;
    if (this.streams.get(id) !== owned) return errorAck('STREAM_NOT_FOUND');
    const change: PartChange = { kind: 'update', index, patch };
    // A user's decision may have been recorded on another replica: the part as shared state holds it.
    const asked = owned.parts[index];
    if (asked?.type === 'tool' && asked.state === 'approval-requested') {
      const fresh = (await this.ctx.store.streams.get(owned.agentId, id))?.parts[index];
      if (fresh?.type === 'tool' && this.streams.get(id) === owned) owned.parts[index] = fresh;
    }
    const invalid = partChangeError(owned.parts, change, this.ctx.config.MESSAGE_MAX_PARTS);
    if (invalid) return errorAck('INVALID_PAYLOAD', invalid);
    const held = owned.parts[index];
    if ((held.type === 'text' || held.type === 'reasoning') && typeof patch.text !== 'string') {
      return errorAck('INVALID_PAYLOAD', `part (index ${index}).text: an update of a ${held.type} part gives its whole text`);
    }
    const merged = { ...held, ...patch, type: held.type } as MessagePart;
    const frames = owned.partFrames;
    const result = await this.change(owned, change, jsonBytes(patch), frames?.publication ?? null, frames?.around(index, merged) ?? null);
    if (!result.ok) return result;
    if (frames === null) this.emitPart(owned.room, { id, seq: result.seq, index, part: merged });
    this.feed.stream(owned.agentId, owned.clientId, Events.messagePart, { id, seq: result.seq, index, part: merged });
    return { ok: true, seq: result.seq };
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
    const refused = overBudget(this.deliveries, owned.agentId, owned.clientId);
    if (refused) {
      owned.throttled = true;
      return refused;
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
      this.onFailed(owned);
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
      this.streams.forget(owned);
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
    const frames = this.ctx.frames.part(room, ref.id);
    const patch = { state: (part as { state?: string }).state, approval: (part as { approval?: unknown }).approval };
    const target: StreamTarget = { agentId: ref.agentId, id: ref.id, clientId: ref.clientId };
    const change: PartChange = { kind: 'update', index, patch };
    const result = await this.ctx.store.streams.append(
      target,
      { record: encodeChange(change), bytes: 0 },
      this.bounds,
      frames?.publication ?? null,
      frames?.around(index, part) ?? null,
      false,
    );
    if (!result.ok) return null;
    const owned = this.streams.get(ref.id);
    if (owned?.parts[index]) applyPartChange(owned.parts, change);
    if (frames === null) this.emitPart(room, { id: ref.id, seq: result.seq, index, part });
    this.feed.stream(ref.agentId, ref.clientId, Events.messagePart, { id: ref.id, seq: result.seq, index, part });
    return result.seq;
  }
}
