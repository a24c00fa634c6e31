import { RelayChatError } from './codes';

// As long as a real clientMessageId, so the size check measures what goes on the wire.
const PLACEHOLDER_ID = '00000000-0000-4000-8000-000000000000';

/**
 * Checks a message before it enters the outbox; returns the error to reject `send` with, if any.
 * The hub drops a connection on payloads far over its limit, so an oversized message let through
 * would be resent, and the connection dropped, after every reconnect.
 */
export function checkPayload(text: unknown, data: unknown, maxBytes: number, parts?: unknown): RelayChatError | undefined {
  if (typeof text !== 'string') return new RelayChatError('INVALID_PAYLOAD', 'text must be a string');
  if (parts !== undefined && !Array.isArray(parts)) return new RelayChatError('INVALID_PAYLOAD', 'parts must be an array');
  if (data !== undefined && (data === null || typeof data !== 'object' || Array.isArray(data))) {
    return new RelayChatError('INVALID_PAYLOAD', 'data must be a JSON object');
  }
  let json: string;
  try {
    json = JSON.stringify({ clientMessageId: PLACEHOLDER_ID, text, data, parts });
  } catch {
    return new RelayChatError('INVALID_PAYLOAD', 'data must be JSON-serialisable');
  }
  if (new TextEncoder().encode(json).length > maxBytes) {
    return new RelayChatError('PAYLOAD_TOO_LARGE', `message exceeds ${maxBytes} bytes`);
  }
  return undefined;
}
