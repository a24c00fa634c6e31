import type { MessageData } from '.';

/**
 * Deepest nesting of arrays and objects accepted in `data` and debug traces. Everything that
 * handles a payload after validation recurses over it (JSON.stringify, Socket.IO's binary scan,
 * msgpack in the Redis adapter), so a few kilobytes of `[[[[…` would otherwise overflow the
 * stack and surface as a server error instead of INVALID_PAYLOAD.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * INVALID_PAYLOAD when `data` nests deeper than {@link MAX_JSON_DEPTH}; PAYLOAD_TOO_LARGE when
 * `text` or the whole payload (text plus serialized data) exceeds `maxBytes` UTF-8 bytes; null
 * otherwise. Socket.IO frames are capped at twice the limit, so anything in between reaches this
 * check and gets an ack instead of a dropped connection.
 */
export function payloadError(
  text: string,
  data: MessageData | undefined,
  maxBytes: number,
): 'INVALID_PAYLOAD' | 'PAYLOAD_TOO_LARGE' | null {
  const textBytes = Buffer.byteLength(text, 'utf8');
  if (textBytes > maxBytes) return 'PAYLOAD_TOO_LARGE';
  if (data === undefined) return null;
  if (nestsDeeperThan(data, MAX_JSON_DEPTH)) return 'INVALID_PAYLOAD';
  const dataBytes = Buffer.byteLength(JSON.stringify(data), 'utf8');
  return textBytes + dataBytes > maxBytes ? 'PAYLOAD_TOO_LARGE' : null;
}

/** The same checks for an arbitrary JSON value (debug traces). */
export function jsonValueError(value: unknown, maxBytes: number): 'INVALID_PAYLOAD' | 'PAYLOAD_TOO_LARGE' | null {
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) return 'INVALID_PAYLOAD';
  return jsonBytes(value) > maxBytes ? 'PAYLOAD_TOO_LARGE' : null;
}

/** Serialized size of an arbitrary JSON value; call only on values within {@link MAX_JSON_DEPTH}. */
export function jsonBytes(value: unknown): number {
  const json = JSON.stringify(value);
  return json === undefined ? 0 : Buffer.byteLength(json, 'utf8');
}

/** Iterative, so the check itself cannot overflow the stack it protects. `{}` and `[]` are depth 1. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  while (pending.length > 0) {
    const { value: next, depth } = pending.pop()!;
    if (next === null || typeof next !== 'object') continue;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(next) ? next : Object.values(next)) pending.push({ value: child, depth: depth + 1 });
  }
  return false;
}
