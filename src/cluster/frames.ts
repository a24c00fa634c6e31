import type { Namespace } from 'socket.io';
import { Events, type AgentApproval, type AgentInboundMessage, type MessagePart } from '../protocol';
import { roomBroadcastFramer, type BroadcastFrame } from '../internals/redis-adapter.internals';
import type { DeliveryRecord, DeliveryResult, RuntimeEvent } from '../relay/dispatcher';
import type { DeltaFrames, PartFrames, RelayFrames } from '../relay/relay.context';
import { fill, type Template } from '../store/json-frames';
import type { Publication } from '../store/conversation-log';
import type { Handoff } from '../store/store';
import type { ChangeFrame, DeltaPublication } from '../store/stream-store';

/**
 * Every JSON frame that crosses replicas over Redis, shaped here and nowhere else
 * (test/unit/frame-owner.test.ts holds it; docs/architecture.md, "Across replicas"):
 *
 * - delivery requests and their responses, point to point between the dispatchers on each
 *   replica's own channel (cluster.dispatcher.ts);
 * - broadcasts to a client's room as the Socket.IO adapter publishes them, which the store
 *   publishes in the step that logs or records what they carry: a relayed message, a stream's
 *   `message:delta`, `message:part` and `message:end` ({@link RoomFrames}, for the relay's
 *   {@link RelayFrames}). The adapter's own format is spelled in
 *   src/internals/redis-adapter.internals.ts, fenced with the rest of the adapter's internals.
 *
 * Some frames are built around a value serialized elsewhere or later (a logged message's JSON, a
 * runtime's socket id known only inside the intake's script, a change's seq the store assigns): a
 * {@link Template}, `before + value + after`. The store only fills the templates it is given, so
 * what it needs stays in store/json-frames.ts: `Template` and `fill` (its Lua scripts concatenate
 * `before .. value .. after` the same way) and `jsonAroundString` (the memory store's way to log a
 * long text without copying it). What only frames use, {@link withTrailingField} and
 * {@link parseFrame}, lives here.
 */

/**
 * `object`'s JSON with one more field, `key`, last, whose JSON value is left to fill in. `object`
 * must not have `key` itself.
 */
export function withTrailingField(object: object, key: string): Template {
  const json = JSON.stringify(object);
  const open = json === '{}' ? '{' : `${json.slice(0, -1)},`;
  return { before: `${open}${JSON.stringify(key)}:`, after: '}' };
}

/** Parses a frame received from Redis; null for anything that is not JSON. */
export function parseFrame<T>(raw: Buffer | string): T | null {
  try {
    return JSON.parse(raw.toString()) as T;
  } catch {
    return null;
  }
}

/**
 * A delivery request as JSON: `message` is its last field, so that the replica serving it takes
 * the message's JSON as it came ({@link splitRequest}) and writes it to the runtime without parsing
 * and serializing it again.
 */
interface DeliveryRequest {
  t: 'req';
  id: string;
  from: string;
  socketId: string;
  timeoutMs: number;
  /** The dedupe record the serving replica marks delivered once the runtime acked. */
  record?: DeliveryRecord;
  /** The event the runtime gets, when not `message` (an approval decision). */
  event?: RuntimeEvent;
  message: AgentInboundMessage | AgentApproval;
}

/** A delivery request but its message: what the serving replica reads of it. */
export type RequestEnvelope = Omit<DeliveryRequest, 'message'>;

/** The answer to request `id`, on the requesting replica's channel. */
interface DeliveryResponse {
  t: 'res';
  id: string;
  result: DeliveryResult;
}

/** What comes before a request's message in its JSON. */
const MESSAGE_FIELD = ',"message":';

/** The field the intake inserts first in a handed-off message when an operator holds the conversation. */
const OBSERVED_MARK = `"observed":true,`;

/**
 * Request `id` from replica `from` to deliver `message` to the runtime socket `socketId` (as
 * `event`, when not `message`), its fields in the order they go on the wire.
 */
export function requestFrame(
  id: string,
  from: string,
  socketId: string,
  timeoutMs: number,
  record: DeliveryRecord | null,
  event: RuntimeEvent | undefined,
  message: AgentInboundMessage | AgentApproval,
): string {
  const envelope: RequestEnvelope = { t: 'req', id, from, socketId, timeoutMs };
  if (record !== null) envelope.record = record;
  if (event !== undefined) envelope.event = event;
  return fill(withTrailingField(envelope, 'message'), JSON.stringify(message));
}

/**
 * Request `id` for the intake's script to publish ({@link Handoff}): the script fills in the socket
 * id of the runtime it picks and, where an operator holds the conversation, inserts the observed
 * mark first in the message's object (docs/handoff.md).
 */
export function handoffRequest(
  id: string,
  from: string,
  timeoutMs: number,
  record: DeliveryRecord,
  message: AgentInboundMessage,
): Handoff['request'] {
  const around = withTrailingField({ t: 'req', id, from, timeoutMs, record } satisfies Omit<RequestEnvelope, 'socketId'>, 'socketId');
  return {
    before: around.before,
    after: `${MESSAGE_FIELD}${JSON.stringify(message)}}`,
    at: MESSAGE_FIELD.length + 1,
    observed: OBSERVED_MARK,
  };
}

/** The answer to request `id`. */
export function responseFrame(id: string, result: DeliveryResult): string {
  return JSON.stringify({ t: 'res', id, result } satisfies DeliveryResponse);
}

/**
 * A request's fields but the message, and the message's JSON: found as the frame's last field (a
 * quote outside a JSON string is never escaped, so the first `,"message":` is a key of the outer
 * object, the envelope's keys and values naming no such key). Null when the frame is not a request
 * (a response).
 */
export function splitRequest(frame: string): { envelope: RequestEnvelope; json: string } | null {
  const at = frame.indexOf(MESSAGE_FIELD);
  if (at === -1 || frame.charCodeAt(frame.length - 1) !== 0x7d /* } */) return null;
  const envelope = parseFrame<RequestEnvelope>(`${frame.slice(0, at)}}`);
  if (envelope?.t !== 'req' || typeof envelope.socketId !== 'string' || typeof envelope.timeoutMs !== 'number') return null;
  return { envelope, json: frame.slice(at + MESSAGE_FIELD.length, -1) };
}

/** The response a frame holds, or null. */
export function parseResponse(frame: string): DeliveryResponse | null {
  const parsed = parseFrame<DeliveryResponse>(frame);
  return parsed?.t === 'res' ? parsed : null;
}

/** A stream's change events as JSON up to their seq: `{"id":…,"seq":`. */
function changeHead(id: string): string {
  return `{"id":${JSON.stringify(id)},"seq":`;
}

/** The `message:delta`s of one stream. */
class StreamDeltaFrames implements DeltaFrames {
  constructor(
    readonly publication: DeltaPublication,
    private readonly head: string,
  ) {}

  around(text: string, index: number): ChangeFrame {
    return { head: this.head, tail: `,"text":${JSON.stringify(text)},"index":${index}}` };
  }
}

/** The `message:part`s of one stream. */
class StreamPartFrames implements PartFrames {
  constructor(
    readonly publication: DeltaPublication,
    private readonly head: string,
  ) {}

  around(index: number, part: MessagePart): ChangeFrame {
    return { head: this.head, tail: `,"index":${index},"part":${JSON.stringify(part)}}` };
  }
}

/**
 * What the client namespace's adapter publishes for `nsp.to(room).emit(event, data)`, for the store
 * to publish in the same step as the write that logs or records `data`; the store fills in `data`
 * with the JSON text it writes. Relayed messages are JSON values (validated on the way in), which
 * the adapter encodes as JSON too.
 *
 * It names no replica as its sender, so this replica's adapter delivers it to its own sockets too
 * and the caller emits nothing itself. Every message a socket gets this way comes on one connection
 * in the order Redis ran the appends, which is the log's order: a socket never holds a newer message
 * while an older one is still on its way (as it would with a direct local emit while the
 * subscription lags), so when the subscription drops, what the socket missed is exactly what comes
 * after the last message it saw, and a replay from there restores it.
 *
 * Every frame is null until {@link RoomFrames.frame} is given the namespace, and stays null where
 * its adapter gives rooms no channel of their own: one replica (never given one), a Redis Cluster
 * (a room's channel may be on another shard than the keys the store writes), another adapter.
 */
export class RoomFrames implements RelayFrames {
  private framer: ((room: string, event: string) => BroadcastFrame | null) | null = null;

  /** From now on, frames broadcasts to the rooms of `nsp` (the client namespace). */
  frame(nsp: Namespace): void {
    this.framer = roomBroadcastFramer(nsp);
  }

  message(room: string): Publication | null {
    return this.broadcast(room, Events.message);
  }

  delta(room: string, id: string): DeltaFrames | null {
    const publication = this.broadcast(room, Events.messageDelta);
    return publication === null ? null : new StreamDeltaFrames(publication, changeHead(id));
  }

  part(room: string, id: string): PartFrames | null {
    const publication = this.broadcast(room, Events.messagePart);
    return publication === null ? null : new StreamPartFrames(publication, changeHead(id));
  }

  end(room: string): DeltaPublication | null {
    return this.broadcast(room, Events.messageEnd);
  }

  private broadcast(room: string, event: string): BroadcastFrame | null {
    return this.framer === null ? null : this.framer(room, event);
  }
}
