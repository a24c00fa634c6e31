import { isRetryable, type AckError } from '../../protocol';

/** Codes the agent SDK gives its own errors, beside the hub's handshake and ack codes. */
export const AgentSdkCodes = {
  /** `write` or `end` on a stream that has already ended (by `end`, or by the hub). */
  STREAM_ENDED: 'STREAM_ENDED',
  /** The connection dropped while the stream was open; the hub ended it `interrupted`. */
  STREAM_INTERRUPTED: 'STREAM_INTERRUPTED',
  /** The hub did not acknowledge a request within `ackTimeoutMs`. */
  TIMEOUT: 'TIMEOUT',
} as const;

/**
 * A refused handshake or an error ack, with the hub's code, or one of {@link AgentSdkCodes}.
 * `retryable` on an ack error says whether sending again may succeed: `SERVER_UNAVAILABLE` (the
 * conversation log could not be written, so the reply was not delivered) and `RATE_LIMITED` are;
 * `INVALID_PAYLOAD`, `PAYLOAD_TOO_LARGE`, `STREAM_NOT_FOUND`, `STREAM_LIMIT` and `QUOTA_EXCEEDED` are not.
 */
export class RelayAgentError extends Error {
  /** The hub refused a reply or stream because an operator holds the conversation (docs/handoff.md); nothing was delivered. */
  static readonly CONVERSATION_HELD = 'CONVERSATION_HELD';

  constructor(
    readonly code: string,
    message: string = code,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'RelayAgentError';
  }
}

/** Whether `err` is the hub refusing a reply or stream because an operator holds the conversation (docs/handoff.md). */
export function isConversationHeld(err: unknown): err is RelayAgentError & { code: 'CONVERSATION_HELD' } {
  return err instanceof RelayAgentError && err.code === 'CONVERSATION_HELD';
}

/** The error of a refused request, retryable as the protocol's catalogue says. */
export function ackError(error: AckError | undefined): RelayAgentError {
  const code = typeof error?.code === 'string' ? error.code : 'INVALID_PAYLOAD';
  return new RelayAgentError(code, error?.message ?? code, isRetryable('ack', code));
}

/** The error of a request the hub did not answer in time (Socket.IO's ack timeout). */
export function timeoutError(what: string): RelayAgentError {
  return new RelayAgentError(AgentSdkCodes.TIMEOUT, `${what} was not acknowledged in time`, true);
}
