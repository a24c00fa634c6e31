import { HISTORY_MAX_LIMIT, type ClientInboundMessage, type HistoryRequest } from '../../../src/protocol';
import { RelayChatError } from './codes';
import type { StreamingMessage } from './streams';

/** Arguments of `chat.history()`: the newest `limit` (1–100, default 50) messages older than `before`. */
export interface HistoryOptions {
  /** An `id` of the conversation; only older messages are returned. Absent: the newest page. */
  before?: string;
  /** Page size, 1–100; the hub's default is 50. */
  limit?: number;
}

/** What `chat.history()` resolves to: messages oldest first, and whether older ones remain. */
export interface HistoryPage {
  /** An answer still being streamed is there with the text this chat holds and `streaming: true`. */
  messages: Array<ClientInboundMessage | StreamingMessage>;
  hasMore: boolean;
}

/**
 * The `history` payload for `options`, or the `INVALID_PAYLOAD` error the hub would answer, found
 * before a round trip. Unknown properties are left out rather than sent.
 */
export function historyRequest(options: HistoryOptions | undefined): HistoryRequest | RelayChatError {
  const { before, limit } = options ?? {};
  if (before !== undefined && (typeof before !== 'string' || before.length < 1 || before.length > 64)) {
    return new RelayChatError('INVALID_PAYLOAD', 'before must be a message id');
  }
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_LIMIT)) {
    return new RelayChatError('INVALID_PAYLOAD', `limit must be an integer from 1 to ${HISTORY_MAX_LIMIT}`);
  }
  const request: HistoryRequest = {};
  if (before !== undefined) request.before = before;
  if (limit !== undefined) request.limit = limit;
  return request;
}

/** The page a `history` ack holds, read defensively. */
export function historyPage(ack: { messages?: HistoryPage['messages']; hasMore?: boolean }): HistoryPage {
  return { messages: Array.isArray(ack.messages) ? ack.messages : [], hasMore: ack.hasMore === true };
}
