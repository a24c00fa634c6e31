import type { MessageData, StreamStatus } from '../protocol';
import type { LoggedMessage, Template } from './conversation-log';

/**
 * Open streamed replies (docs/streaming.md): their accumulated text and delta count beside the
 * conversation log, bounded and expiring. Opening a stream also logs its start; ending it logs its
 * final, in the same step (one script on Redis), so a stream is either open here or final in the log.
 */

/** A stream as opened: its start message (text ''), the conversation and the runtime socket that owns it. */
export interface StreamRecord {
  message: LoggedMessage;
  clientId: string;
  owner: string;
}

/** An open stream with what it holds so far. */
export interface OpenStream extends StreamRecord {
  text: string;
  seq: number;
}

/** A stream of a bot, as the orphan sweep names it. */
export interface StreamRef {
  agentId: string;
  id: string;
}

/** The stream a delta goes to, with its conversation (whose set of open streams expires with it). */
export interface StreamTarget extends StreamRef {
  clientId: string;
  /**
   * The store's own: what it derives once per stream for its deltas (keys, framing). A caller that
   * appends many deltas passes the same target each time and leaves this alone.
   */
  prepared?: unknown;
}

/** `quota`: the bot's quota has no room for the text (see store/bot-quota.ts); nothing changed. */
export type DeltaResult = { ok: true; seq: number } | { ok: false; reason: 'not-found' | 'too-large' | 'quota' };

/** How a stream ends: `text` and `data`, when given, replace the accumulated text and the start's data. */
export interface StreamEnding {
  text?: string;
  data?: MessageData;
  status: StreamStatus;
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
 * What other replicas get of a delta (or an end), published by the store with the append (or the
 * end) where it can: `before + {"id","seq","text"} + after` on `channel` (an end: its `message:end`).
 */
export interface DeltaPublication extends Template {
  channel: string;
}

export interface StreamStore {
  /**
   * Records an open stream and logs its start (`logged`: the log is on). Write-ahead: resolved means
   * recorded. Rejects with QuotaExceededError (store/bot-quota.ts), nothing recorded, when the bot
   * has its quota of open streams or no room for one.
   */
  open(record: StreamRecord, bounds: StreamBounds, logged: boolean): Promise<void>;
  /**
   * Appends `text` to an open stream: its new seq; `too-large` past
   * `bounds.maxBytes` and `quota` past the bot's quota (nothing changed), `not-found` when it is not open. With a publication, the
   * delta is published once appended. `renew` pushes the stream's expiry to `bounds.ttlMs` from now;
   * without it the expiry stands (the owner renews it often enough that an open stream never expires).
   */
  append(
    stream: StreamTarget,
    text: string,
    bounds: StreamBounds,
    publication: DeltaPublication | null,
    renew: boolean,
  ): Promise<DeltaResult>;
  /**
   * Ends a stream if it is still open, logging its final and an end marker: the final and the deltas
   * it held, or null when it was not open (ended by another call, expired, never there). Where
   * `publicationFor` gives a publication for the stream's conversation and the store can publish,
   * its `message:end` (the final with its status) is published in the same step as the marker, so
   * it reaches the subscribers in log order and only once the end is logged (`published`).
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

/** The final's JSON parts before and after its text, data and status (see store/log-entries.ts finalMessage). */
export function finalHead(message: LoggedMessage): { head: string; tail: string } {
  const head = JSON.stringify({ id: message.id, ts: message.ts, agentId: message.agentId, author: 'agent' }).slice(0, -1);
  return { head, tail: message.replyTo === undefined ? '' : `,"replyTo":${JSON.stringify(message.replyTo)}` };
}
