/**
 * Browser embed SDK of relay-hub: `new RelayChat({ url, agentId, token })`.
 * Served by the hub as `/sdk/embed.mjs` (ES module) and `/sdk/embed.js` (global `RelayChat`).
 */
export { RelayChat } from './relay-chat';
export type { ConnectionState, Gap, RelayChatEvents, SendOptions, StateChange } from './chat-events';
export type { RelayChatOptions } from './options';
export type { BackoffOptions } from './backoff';
export type { TokenOption } from './token-source';
export type { SendResult } from './outbox';
export type { HistoryOptions, HistoryPage } from './history';
export type { PersistOption, StorageLike } from './resume-point';
export type { MessageUpdate, StreamingMessage } from './streams';
export { RelayChatError, type RelayChatErrorCode } from './codes';
export type {
  ActivityState,
  AgentActivity,
  AgentStatus,
  ApprovalDecision,
  Author,
  ClientConversationControl,
  ClientInboundMessage,
  ControlState,
  MessageData,
  MessageEnd,
  MessagePart,
  MessagePartEvent,
  Rating,
  SessionInfo,
  StreamStatus,
  ToolPart,
} from '../../../src/protocol';
