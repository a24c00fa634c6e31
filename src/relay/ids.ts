import { v7 } from 'uuid';

/** A message's hub-assigned identity: a UUIDv7 and the same instant as an ISO 8601 UTC string. */
export interface MessageStamp {
  id: string;
  ts: string;
}

/**
 * Hands out message stamps: a new UUIDv7 (RFC 9562: 48-bit Unix milliseconds, a counter that keeps
 * ids of one millisecond ordered, random bits) and its timestamp. `ts` is read back from the id, so
 * sorting by either sorts the same way. A busy hub stamps many messages per millisecond, so the
 * last millisecond's ISO string is kept (formatting one costs more than making the id).
 */
export class MessageStamper {
  private lastMs = -1;
  private lastIso = '';

  next(): MessageStamp {
    const id = v7();
    const ms = idMillis(id);
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastIso = new Date(ms).toISOString();
    }
    return { id, ts: this.lastIso };
  }
}

/** The Unix milliseconds a UUIDv7 was created at. */
export function idMillis(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/** The current time as an ISO 8601 UTC string, the only time format on the wire. */
export function isoNow(now = Date.now()): string {
  return new Date(now).toISOString();
}
