import type { Socket } from 'socket.io-client';
import {
  Events,
  HISTORY_MAX_LIMIT,
  type ClientInboundMessage,
  type ClientToHubEvents,
  type HistoryRequest,
  type HubToClientEvents,
} from '../../protocol';
import { errorFromAck, RelayChatError, SdkCodes } from './codes';

/** Arguments of `chat.history()`: the newest `limit` (1–100, default 50) messages older than `before`. */
export interface HistoryOptions {
  /** An `id` of the conversation; only older messages are returned. Absent: the newest page. */
  before?: string;
  /** Page size, 1–100; the hub's default is 50. */
  limit?: number;
}

/** What `chat.history()` resolves to: messages oldest first, and whether older ones remain. */
export interface HistoryPage {
  messages: ClientInboundMessage[];
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

/**
 * Asks the hub for one page. The ack is awaited at most `timeoutMs`; a connection lost before it
 * (Socket.IO fails pending acks on disconnect) is `NOT_CONNECTED`, a chat closed meanwhile `CLOSED`.
 * @internal Left out of the published types, which then need no socket.io-client types.
 */
export function requestHistory(
  socket: Socket<HubToClientEvents, ClientToHubEvents>,
  request: HistoryRequest,
  timeoutMs: number,
  closed: () => boolean,
): Promise<HistoryPage> {
  return new Promise((resolve, reject) => {
    socket.timeout(timeoutMs).emit(Events.history, request, (err, ack) => {
      if (closed()) reject(new RelayChatError(SdkCodes.CLOSED, 'the chat is closed'));
      else if (err) reject(socket.connected ? new RelayChatError('TIMEOUT', 'no answer in time', true) : notConnected());
      else if (!ack?.ok) reject(errorFromAck(ack?.error, 'history refused'));
      else resolve({ messages: Array.isArray(ack.messages) ? ack.messages : [], hasMore: ack.hasMore === true });
    });
  });
}

/** The rejection of `history()` without a live connection (before it, or lost while waiting). */
export function notConnected(): RelayChatError {
  return new RelayChatError(SdkCodes.NOT_CONNECTED, 'not connected', true);
}
