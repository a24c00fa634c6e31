import type { Socket } from 'socket.io-client';
import {
  Events,
  HISTORY_MAX_LIMIT,
  type ClientInboundMessage,
  type ClientToHubEvents,
  type HistoryRequest,
  type HubToClientEvents,
} from '../../../src/protocol';
import { RelayChatError } from './codes';
import { request } from './request';
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

/**
 * Asks the hub for one page (see {@link request} for the failures).
 * @internal Left out of the published types, which then need no socket.io-client types.
 */
export function requestHistory(
  socket: Socket<HubToClientEvents, ClientToHubEvents> | undefined,
  live: boolean,
  payload: HistoryRequest,
  timeoutMs: number,
  closed: () => boolean,
): Promise<HistoryPage> {
  return request(socket, live, Events.history, payload, timeoutMs, closed).then((ack) => ({
    messages: Array.isArray(ack.messages) ? ack.messages : [],
    hasMore: ack.hasMore === true,
  }));
}
