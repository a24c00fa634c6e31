import { finalMessage, textOfParts, type MessageData, type MessagePart, type StreamStatus } from '../protocol';
import type { LoggedMessage, Template } from './conversation-log';

/**
 * Open streamed replies (docs/streaming.md, docs/parts.md): their changes (text deltas, parts, updates) and count beside the
 * conversation log, bounded and expiring. Opening a stream also logs its start; ending it logs its
 * final, in the same step (one script on Redis), so a stream is either open here or final in the log.
 */

/** A stream as opened: its start message (text '', its first parts if any), the conversation and the runtime socket that owns it. */
export interface StreamRecord {
  message: LoggedMessage;
  clientId: string;
  owner: string;
}

/** An open stream with what it holds so far: its parts after `seq` changes, and their text. */
export interface OpenStream extends StreamRecord {
  text: string;
  parts: MessagePart[];
  seq: number;
}

/** One change to a stream as a store appends it: its encoding (stream-changes.ts) and the bytes it counts against the bound (0: not bounded). */
export interface EncodedChange {
  record: string;
  bytes: number;
}

/** A stream of a bot, as the orphan sweep names it. */
export interface StreamRef {
  agentId: string;
  id: string;
}

/** The stream a delta goes to, with its conversation (whose set of open streams expires with it). */
export interface StreamTarget extends StreamRef {
  clientId: string;
}

/** `quota`: the bot's quota has no room for the text (see store/bot-quota.ts); nothing changed. */
export type DeltaResult = { ok: true; seq: number } | { ok: false; reason: 'not-found' | 'too-large' | 'quota' };

/** How a stream ends: `text`, `parts` and `data`, when given, replace what accumulated and the start's data. */
export interface StreamEnding {
  text?: string;
  parts?: MessagePart[];
  data?: MessageData;
  status: StreamStatus;
}

/**
 * The final of an open stream ended with `ending` (docs/parts.md): given parts replace the
 * accumulated ones, and the text with them (their text parts); a given text alone replaces the text,
 * and the text parts with it.
 */
export function finalOf(open: OpenStream, ending: StreamEnding): LoggedMessage {
  let parts = ending.parts ?? open.parts;
  let text = open.text;
  if (ending.parts !== undefined) text = textOfParts(parts);
  else if (ending.text !== undefined) {
    text = ending.text;
    // The parts before the first text part are not text: the one text part goes where that was.
    const first = parts.findIndex((p) => p.type === 'text');
    const others = parts.filter((p) => p.type !== 'text');
    const at = first === -1 ? others.length : first;
    parts = text === '' ? others : [...others.slice(0, at), { type: 'text', text }, ...others.slice(at)];
  }
  return finalMessage(open.message, { text, parts, data: ending.data ?? open.message.data }, ending.status);
}

/** What {@link StreamStore.end} ended: the final as logged, the deltas it held, and the conversation. */
export interface EndedStream {
  final: LoggedMessage;
  seq: number;
  clientId: string;
  /** The store published its `message:end` with the end. */
  published: boolean;
}

/** The publication of a conversation's `message:end`, or null where the caller emits it itself. */
export type EndPublications = (agentId: string, clientId: string) => DeltaPublication | null;

/** Per-call bounds: the accumulated text's bytes, and how long an untouched stream lives. */
export interface StreamBounds {
  maxBytes: number;
  ttlMs: number;
}

/**
 * What other replicas get of a change (or an end), published by the store with the append (or the
 * end) where it can, on `channel`: a change's event JSON goes between `before` and `after`, with its
 * seq, which the store assigns, between the caller's `head` and `tail` (see {@link ChangeFrame}).
 */
export interface DeltaPublication extends Template {
  channel: string;
}

/** A change's event (`message:delta`, `message:part`) as JSON around its seq: `head + seq + tail`, the caller's. */
export interface ChangeFrame {
  head: string;
  tail: string;
}

export interface StreamStore {
  /**
   * Records an open stream and logs its start (`logged`: the log is on). Write-ahead: resolved means
   * recorded. Rejects with QuotaExceededError (store/bot-quota.ts), nothing recorded, when the bot
   * has its quota of open streams or no room for one, and with ConversationHeldError
   * (store/control-store.ts) when an operator holds the conversation: read in the same step.
   */
  open(record: StreamRecord, bounds: StreamBounds, logged: boolean): Promise<void>;
  /**
   * Appends a change to an open stream: its new seq; `too-large` when its bytes take the stream past
   * `bounds.maxBytes` and `quota` past the bot's quota (nothing changed), `not-found` when it is not open. With a publication, the
   * change's event (`frame` around the seq) is published once appended. `renew` pushes the stream's
   * expiry to `bounds.ttlMs` from now; without it the expiry stands (the owner renews it often
   * enough that an open stream never expires).
   */
  append(
    stream: StreamTarget,
    change: EncodedChange,
    bounds: StreamBounds,
    publication: DeltaPublication | null,
    frame: ChangeFrame | null,
    renew: boolean,
  ): Promise<DeltaResult>;
  /**
   * Ends a stream if it is still open, logging its final and an end marker: the final and the deltas
   * it held, or null when it was not open (ended by another call, expired, never there). Where
   * `publicationFor` gives a publication for the stream's conversation and the store can publish,
   * its `message:end` (the final with its status) is published in the same step as the marker, so
   * it reaches the subscribers in log order and only once the end is logged (`final` is then null).
   */
  end(agentId: string, id: string, ending: StreamEnding, logged: boolean, publicationFor?: EndPublications): Promise<EndedStream | null>;
  /** An open stream by id, or null. */
  get(agentId: string, id: string): Promise<OpenStream | null>;
  /** The open streams of a conversation, oldest first. */
  openOf(agentId: string, clientId: string): Promise<OpenStream[]>;
  /** Marks streams as owned by a live replica until `untilMs`; past it, {@link orphans} lists them. */
  keepAlive(refs: readonly StreamRef[], untilMs: number): Promise<void>;
  /** Streams whose owner stopped keeping them alive before `nowMs` (a dead replica's). */
  orphans(nowMs: number, limit: number): Promise<StreamRef[]>;
  /** Forgets streams for {@link orphans} (ended). */
  forget(refs: readonly StreamRef[]): Promise<void>;
}
