// The retryable lists, not the catalogues: their descriptions would add about 1 KB to the bundle.
import { isRetryable, type AckCode, type HandshakeCode, type SessionClosedCode } from '../../../src/protocol';

/**
 * Codes raised by the SDK itself, on top of the hub's handshake, session and ack codes. The SDK
 * spells them as literals (this object is the catalogue for types and docs, and stays out of the
 * bundle; docs/browser-sdk.md, "Getting it", has the size budget).
 */
export const SdkCodes = {
  /** `send` while the outbox already holds `outboxLimit` messages. */
  OUTBOX_FULL: 'OUTBOX_FULL',
  /** `send` after `close()` or a terminal stop; pending sends are rejected with it on `close()`. */
  CLOSED: 'CLOSED',
  /** The token getter threw, rejected or resolved to something that is not a non-empty string. */
  TOKEN_FETCH_FAILED: 'TOKEN_FETCH_FAILED',
  /** The token getter did not settle within `tokenTimeoutMs`. */
  TOKEN_TIMEOUT: 'TOKEN_TIMEOUT',
  /** A connection attempt failed without a hub code (hub down, connection limit, network). */
  CONNECT_FAILED: 'CONNECT_FAILED',
  /** `history()` while the chat is not connected, or its connection dropped before the answer. */
  NOT_CONNECTED: 'NOT_CONNECTED',
  /** `persist` storage threw (quota, disabled); reported once, the last message id stays in memory. */
  STORAGE_FAILED: 'STORAGE_FAILED',
} as const;
export type SdkCode = keyof typeof SdkCodes;

/** Every code a {@link RelayChatError} or a `disconnected` state can carry. */
export type RelayChatErrorCode = SdkCode | HandshakeCode | SessionClosedCode | AckCode;

/**
 * The error type of the embed SDK: `send` and `history` rejections and `error` events.
 *
 * @example
 * chat.send('hi').catch((e) => {
 *   if (e instanceof RelayChatError && e.code === 'AGENT_OFFLINE') showOfflineNotice();
 * });
 */
export class RelayChatError extends Error {
  override readonly name = 'RelayChatError';

  constructor(
    /** Stable machine-readable code. */
    readonly code: RelayChatErrorCode | (string & {}),
    message: string = code,
    /** Whether the SDK keeps trying (or, for a send, whether a resend may succeed). */
    readonly retryable = false,
  ) {
    super(message);
  }
}

/** The rejection of anything asked of a chat after `close()`. */
export function closedError(): RelayChatError {
  return new RelayChatError('CLOSED', 'the chat is closed');
}

/** What the reconnect loop does after a refused handshake or a hub-ended session. */
export type Verdict = 'retry' | 'stop';

export interface FailureContext {
  /** The token is a getter, so a new attempt brings a fresh token. */
  refreshable: boolean;
  /** `TOKEN_INVALID` was already retried once since the last successful connect. */
  invalidRetried: boolean;
}

/**
 * Classifies a `connect_error` code. A missing code means a refusal before the Socket.IO handshake
 * (server down, connection limit, draining replica): always worth another attempt.
 */
export function classifyHandshake(code: string | undefined, retryable: boolean | undefined, ctx: FailureContext): Verdict {
  if (code === undefined) return 'retry';
  // A getter may hand out a token signed with a rotated secret: give it one more chance.
  if (code === 'TOKEN_INVALID') return ctx.refreshable && !ctx.invalidRetried ? 'retry' : 'stop';
  // A fixed string can never become fresh again.
  if (code === 'TOKEN_EXPIRED') return ctx.refreshable ? 'retry' : 'stop';
  return (retryable ?? isRetryable('handshake', code)) ? 'retry' : 'stop';
}

/**
 * Classifies the code of a `session:closed` that preceded an `io server disconnect`. Without a code
 * the hub ended the session for a reason it did not announce; reconnecting is the safe reading.
 */
export function classifySessionClosed(code: string | undefined, retryable: boolean | undefined, ctx: FailureContext): Verdict {
  if (code === undefined) return 'retry';
  if (code === 'TOKEN_EXPIRED') return ctx.refreshable ? 'retry' : 'stop';
  return (retryable ?? isRetryable('sessionClosed', code)) ? 'retry' : 'stop';
}

/**
 * The {@link RelayChatError} for an error ack; `retryable` (from the protocol's catalogue) marks
 * codes where a later resend may succeed.
 */
export function errorFromAck(error: { code?: string; message?: string } | undefined, fallback: string): RelayChatError {
  const code = error?.code ?? 'INVALID_PAYLOAD';
  return new RelayChatError(code, error?.message ?? fallback, isRetryable('ack', code));
}
