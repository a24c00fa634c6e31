import type { WebSocket } from 'ws';

/**
 * `ws` keeps each connection's frame sender in the private field `WebSocket#_sender`, and every
 * frame, from `send` and from a pre-encoded broadcast alike, goes through its `sendFrame(list, cb)`.
 * The hub reads that field and nothing else of `ws`'s internals; this module is the only place that
 * names it, checked by test/integration/internals/ws.internals.test.ts.
 */
export const WS_CHECKED = { package: 'ws', versions: ['8.23.0'] } as const;

export type SendCallback = (err?: Error) => void;

/** The part of `ws`'s frame sender that every frame goes through. */
export interface FrameSender {
  sendFrame(list: unknown[], cb?: SendCallback): void;
}

/** The frame sender of an open `client`, or null when `ws` no longer keeps one where it did. */
export function frameSenderOf(client: WebSocket): FrameSender | null {
  const sender = (client as unknown as { _sender?: Partial<FrameSender> })._sender;
  return typeof sender?.sendFrame === 'function' ? (sender as FrameSender) : null;
}
