/**
 * Browser embed SDK of relay-hub: `new RelayChat({ url, agentId, token })`.
 * Served by the hub as `/sdk/embed.mjs` (ES module) and `/sdk/embed.js` (global `RelayChat`).
 */
export { RelayChat, type ConnectionState, type Gap, type RelayChatEvents, type StateChange } from './relay-chat';
export type { RelayChatOptions } from './options';
export type { BackoffOptions } from './backoff';
export type { TokenOption } from './token-source';
export type { SendResult } from './outbox';
export type { HistoryOptions, HistoryPage } from './history';
export type { PersistOption, StorageLike } from './resume-point';
export { RelayChatError, type RelayChatErrorCode } from './codes';
export type { AgentStatus, Author, ClientInboundMessage, MessageData, SessionInfo } from '../../protocol';
