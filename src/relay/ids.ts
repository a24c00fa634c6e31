import { v7 } from 'uuid';

/** A message's hub-assigned identity: a UUIDv7 and the same instant as an ISO 8601 UTC string. */
export interface MessageStamp {
  id: string;
  ts: string;
}

/**
 * A new UUIDv7 (RFC 9562: 48-bit Unix milliseconds, a counter that keeps ids of one millisecond
 * ordered, random bits) and its timestamp. `ts` is read back from the id, so sorting by either
 * sorts the same way.
 */
export function newMessageStamp(): MessageStamp {
  const id = v7();
  return { id, ts: new Date(idMillis(id)).toISOString() };
}

/** The Unix milliseconds a UUIDv7 was created at. */
export function idMillis(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/** The current time as an ISO 8601 UTC string, the only time format on the wire. */
export function isoNow(now = Date.now()): string {
  return new Date(now).toISOString();
}
