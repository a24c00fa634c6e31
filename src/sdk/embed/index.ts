/**
 * Browser embed SDK of relay-hub: `new RelayChat({ url, agentId, token })`.
 * Served by the hub as `/sdk/embed.mjs` (ES module) and `/sdk/embed.js` (global `RelayChat`).
 */
export { RelayChat, type ConnectionState, type RelayChatEvents, type StateChange } from './relay-chat';
export type { RelayChatOptions } from './options';
export type { BackoffOptions } from './backoff';
export type { TokenOption } from './token-source';
export type { SendResult } from './outbox';
export { RelayChatError, type RelayChatErrorCode } from './codes';
export type { AgentStatus, ClientInboundMessage, MessageData, SessionInfo } from '../../relay/protocol';
