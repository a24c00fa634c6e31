import type { MessageFeedback } from '../protocol';
import type { LoggedMessage } from './conversation-log';

/**
 * How a conversation log keeps a streamed message (docs/streaming.md): once, at the position of its
 * start, as an entry `{"stream": <message with text ''>}`; when it ends, an end marker
 * `{"endOf": id}` is appended (used only to order replays) and the final message goes to an overlay
 * keyed by id beside the log, as does any feedback on a bot message. Reads merge the overlay into
 * the entries and never show markers. A message entry is the message's own JSON: no message has a
 * top-level `stream` or `endOf` field.
 */
export type LogEntry =
  { kind: 'message'; message: LoggedMessage } | { kind: 'stream'; message: LoggedMessage } | { kind: 'end'; id: string };

/** The overlay of one message: its final (a streamed message that ended) and its feedback, as JSON. */
export interface OverlayFields {
  final?: string | null;
  feedback?: string | null;
}

export function streamStartJson(message: LoggedMessage): string {
  return `{"stream":${JSON.stringify(message)}}`;
}

export function endMarkerJson(id: string): string {
  return `{"endOf":${JSON.stringify(id)}}`;
}

export function decodeEntry(json: string): LogEntry {
  const value = JSON.parse(json) as { stream?: LoggedMessage; endOf?: string } & LoggedMessage;
  if (value.stream !== undefined) return { kind: 'stream', message: value.stream };
  if (typeof value.endOf === 'string') return { kind: 'end', id: value.endOf };
  return { kind: 'message', message: value };
}

/** The id an entry refers to. */
export function entryId(entry: LogEntry): string {
  return entry.kind === 'end' ? entry.id : entry.message.id;
}

/** The ids whose overlay a read of `entries` needs: every bot message, stream and marker. */
export function overlayIds(entries: readonly LogEntry[]): string[] {
  const ids = new Set<string>();
  for (const entry of entries) if (entry.kind !== 'message' || entry.message.author === 'agent') ids.add(entryId(entry));
  return [...ids];
}

/** `message` with its overlay applied: the final replaces a stream start's text, data and status; feedback is added. */
function merged(message: LoggedMessage, fields: OverlayFields | undefined): LoggedMessage {
  let out = message;
  if (fields?.final) out = JSON.parse(fields.final) as LoggedMessage;
  if (fields?.feedback) out = { ...out, feedback: JSON.parse(fields.feedback) as MessageFeedback };
  return out;
}

/**
 * A replay: the messages of `entries` (everything after the cursor, in log order). A stream whose
 * start is there and which is still open (no final) is left out: the resume sends it. An ended
 * stream is its final at its start's position or, when its start came before the cursor, at its
 * end marker's; never twice.
 */
export function replayOf(entries: readonly LogEntry[], overlay: ReadonlyMap<string, OverlayFields>): LoggedMessage[] {
  const starts = new Set<string>();
  for (const entry of entries) if (entry.kind === 'stream') starts.add(entry.message.id);
  const out: LoggedMessage[] = [];
  for (const entry of entries) {
    if (entry.kind === 'message') out.push(merged(entry.message, overlay.get(entry.message.id)));
    else if (entry.kind === 'stream') {
      const fields = overlay.get(entry.message.id);
      if (fields?.final) out.push(merged(entry.message, fields));
    } else if (!starts.has(entry.id)) {
      const fields = overlay.get(entry.id);
      if (fields?.final) out.push(merged(JSON.parse(fields.final) as LoggedMessage, fields));
    }
  }
  return out;
}

/**
 * A history page's messages: markers left out, finals and feedback merged in; an open stream shows
 * its start, marked `streaming`.
 */
export function pageOf(entries: readonly LogEntry[], overlay: ReadonlyMap<string, OverlayFields>): LoggedMessage[] {
  const out: LoggedMessage[] = [];
  for (const entry of entries) {
    if (entry.kind === 'end') continue;
    const fields = overlay.get(entry.message.id);
    const message = merged(entry.message, fields);
    out.push(entry.kind === 'stream' && !fields?.final ? { ...message, streaming: true } : message);
  }
  return out;
}
