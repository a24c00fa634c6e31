import type { MessageData, MessagePart } from '../../../src/protocol';
import { RelayChatError } from './codes';
import { positive } from './checks';

export const DEFAULT_OUTBOX_LIMIT = 100;

/** What `send` resolves to: the hub-assigned id and time of the delivered message. */
export interface SendResult {
  id: string;
  ts: string;
}

/** A message waiting for its ack. */
export interface OutboxEntry {
  readonly clientMessageId: string;
  readonly text: string;
  readonly data?: MessageData;
  readonly parts?: MessagePart[];
  /** Set while the entry is on the wire; a new object per transmission, so a stale ack is recognised. */
  flight: object | undefined;
  readonly resolve: (result: SendResult) => void;
  readonly reject: (err: RelayChatError) => void;
}

/**
 * Messages not yet acknowledged by the hub, in send order. An entry leaves only when settled, so
 * one lost with a connection is sent again, with the same `clientMessageId`, after the reconnect.
 */
export class Outbox {
  private readonly entries: OutboxEntry[] = [];

  constructor(
    readonly limit = DEFAULT_OUTBOX_LIMIT,
    private readonly newId: () => string = randomId,
  ) {
    positive(limit, limit, 'outboxLimit', true);
  }

  get size(): number {
    return this.entries.length;
  }

  /** Queues a message; the promise settles when it is acked, or rejects at once with `OUTBOX_FULL`. */
  add(text: string, data?: MessageData, parts?: MessagePart[]): Promise<SendResult> {
    if (this.entries.length >= this.limit) {
      return Promise.reject(new RelayChatError('OUTBOX_FULL', `outbox holds ${this.limit} unacknowledged messages`, true));
    }
    return new Promise<SendResult>((resolve, reject) => {
      this.entries.push({ clientMessageId: this.newId(), text, data, parts, flight: undefined, resolve, reject });
    });
  }

  /** Whether a message with this `clientMessageId` still waits for its ack. */
  has(clientMessageId: unknown): boolean {
    return this.entries.some((entry) => entry.clientMessageId === clientMessageId);
  }

  /** The oldest entry, the next to transmit. */
  head(): OutboxEntry | undefined {
    return this.entries[0];
  }

  /** Settles an entry and removes it. */
  settle(entry: OutboxEntry, outcome: { result: SendResult } | { error: RelayChatError }): void {
    const index = this.entries.indexOf(entry);
    if (index === -1) return;
    this.entries.splice(index, 1);
    entry.flight = undefined;
    if ('result' in outcome) entry.resolve(outcome.result);
    else entry.reject(outcome.error);
  }

  /** Forgets every transmission in progress; the entries stay queued to be sent again. */
  groundAll(): void {
    for (const entry of this.entries) entry.flight = undefined;
  }

  /** Rejects and removes every entry. */
  rejectAll(error: RelayChatError): void {
    for (const entry of this.entries.splice(0)) entry.reject(error);
  }
}

/**
 * UUIDv4. `crypto.randomUUID` exists only in secure contexts (https, localhost), and embedding pages
 * are not always one; `getRandomValues` is available everywhere.
 */
export function randomId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
