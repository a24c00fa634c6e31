import { HandshakeCodes, SessionClosedCodes, type AckCode, type HandshakeCode, type SessionClosedCode } from '../../relay/protocol';

/** Codes raised by the SDK itself, on top of the hub's handshake, session and ack codes. */
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
} as const;
export type SdkCode = keyof typeof SdkCodes;

/** Every code a {@link RelayChatError} or a `disconnected` state can carry. */
export type RelayChatErrorCode = SdkCode | HandshakeCode | SessionClosedCode | AckCode;

/**
 * The error type of the embed SDK: `send` rejections and `error` events.
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
export function classifyHandshake(
  code: string | undefined,
  retryable: boolean | undefined,
  ctx: FailureContext,
): Verdict {
  if (code === undefined) return 'retry';
  // A getter may hand out a token signed with a rotated secret: give it one more chance.
  if (code === 'TOKEN_INVALID') return ctx.refreshable && !ctx.invalidRetried ? 'retry' : 'stop';
  // A fixed string can never become fresh again.
  if (code === 'TOKEN_EXPIRED') return ctx.refreshable ? 'retry' : 'stop';
  const known = (HandshakeCodes as Record<string, { retryable: boolean }>)[code];
  return (retryable ?? known?.retryable) ? 'retry' : 'stop';
}

/**
 * Classifies the code of a `session:closed` that preceded an `io server disconnect`. Without a code
 * the hub ended the session for a reason it did not announce; reconnecting is the safe reading.
 */
export function classifySessionClosed(
  code: string | undefined,
  retryable: boolean | undefined,
  ctx: FailureContext,
): Verdict {
  if (code === undefined) return 'retry';
  if (code === 'TOKEN_EXPIRED') return ctx.refreshable ? 'retry' : 'stop';
  const known = (SessionClosedCodes as Record<string, { retryable: boolean }>)[code];
  return (retryable ?? known?.retryable) ? 'retry' : 'stop';
}

/** The {@link RelayChatError} for an error ack; `retryable` marks codes where a later resend may succeed. */
export function errorFromAck(error: { code?: string; message?: string } | undefined, fallback: string): RelayChatError {
  const code = error?.code ?? 'INVALID_PAYLOAD';
  return new RelayChatError(code, error?.message ?? fallback, code === 'RATE_LIMITED' || code === 'AGENT_OFFLINE' || code === 'TIMEOUT');
}
