/**
 * Payloads of every event, the handshake `auth` objects and the acks, and the typed event maps
 * Socket.IO's generics take. Their schemas are in the `*.schemas.ts` files (server side only).
 *
 * Times on the wire are ISO 8601 UTC strings. Message ids are UUIDv7 assigned by the hub.
 */
import type { AckCode, HandshakeCode, SessionClosedCode } from './codes';
import type { Author } from './names';

/** `err.data` of a rejected handshake. */
export interface HandshakeErrorData {
  code: HandshakeCode;
  retryable: boolean;
}

export interface AgentAuth {
  apiKey: string;
  agentId: string;
}

export interface ClientAuth {
  token: string;
  agentId: string;
  /** The `id` of the last message this client saw; the hub replays what came after it (docs/protocol.md, recovery). */
  lastMessageId?: string;
}

// ---------------------------------------------------------------------------------------------
// Payloads

/** Optional structured data: any JSON object (not an array, not null). */
export type MessageData = Record<string, unknown>;

/** C→H `message`. Limits: `clientMessageId` 1–64 chars; `text` and the whole payload ≤ MAX_MESSAGE_BYTES. */
export type ClientMessage = { clientMessageId: string; text: string; data?: MessageData };

/** A→H `reply` (and the body of POST /agents/{agentId}/messages). */
export type AgentReply = { to: string; text: string; data?: MessageData; replyTo?: string };

/** A→H `debug`. */
export type AgentDebug = { clientId?: string; trace: unknown };

/** C→H `auth:refresh`. */
export type AuthRefresh = { token: string };

/** H→A `message`. */
export interface AgentInboundMessage {
  id: string;
  ts: string;
  agentId: string;
  /** The sender's verified clientId; `'admin'` marks an admin. */
  from: string;
  text: string;
  data?: MessageData;
}

/** H→C `message`. */
export interface ClientInboundMessage {
  id: string;
  ts: string;
  agentId: string;
  /** `agent` for replies, REST publishes and broadcasts; `user` for the user's own messages (other tabs, history). */
  author: Author;
  text: string;
  data?: MessageData;
  replyTo?: string;
  /** On `user` messages: the sender's `clientMessageId`. */
  clientMessageId?: string;
}

/** C→H `history`: the newest `limit` (1–100, default 50) messages older than `before` (or the newest). */
export type HistoryRequest = { before?: string; limit?: number };

/** H→C `session`. */
export interface SessionInfo {
  clientId: string;
  agentId: string;
  agentOnline: boolean;
  /** ISO time the token expires, or null for a token without `exp`. */
  tokenExpiresAt: string | null;
  /**
   * Present only when the handshake carried `lastMessageId`: true when every message after it was
   * replayed before this event, false when nothing was (unknown id, or too many missed).
   */
  recovered?: boolean;
}

/** H→C `agent:status`. */
export interface AgentStatus {
  agentId: string;
  online: boolean;
}

/** H→C `auth:expiring`. */
export interface AuthExpiring {
  expiresAt: string;
}

/** H→C `debug` (admin sockets only). */
export interface DebugTrace {
  agentId: string;
  clientId?: string;
  trace: unknown;
  ts: string;
}

/** H→C `session:closed`. */
export interface SessionClosed {
  code: SessionClosedCode;
  retryable: boolean;
}

export interface AckError {
  code: AckCode;
  message: string;
}

/** Ack of a delivered `message`, a `reply`, a `debug`. */
export type SendAck = { ok: true; id: string; ts: string } | { ok: false; error: AckError };
export type DebugAck = { ok: true } | { ok: false; error: AckError };
export type RefreshAck = { ok: true; tokenExpiresAt: string | null } | { ok: false; error: AckError };
/** The runtime's ack of an H→A `message` (the agent SDK sends `{ ok: true }` on receipt). */
export type RuntimeAck = { ok: boolean };
/** Ack of `history`: messages oldest first. */
export type HistoryAck = { ok: true; messages: ClientInboundMessage[]; hasMore: boolean } | { ok: false; error: AckError };

// ---------------------------------------------------------------------------------------------
// Typed event maps for Socket.IO generics

export interface ClientToHubEvents {
  message: (payload: ClientMessage, ack: (res: SendAck) => void) => void;
  'auth:refresh': (payload: AuthRefresh, ack: (res: RefreshAck) => void) => void;
  history: (payload: HistoryRequest, ack: (res: HistoryAck) => void) => void;
}

export interface HubToClientEvents {
  session: (info: SessionInfo) => void;
  message: (message: ClientInboundMessage) => void;
  'agent:status': (status: AgentStatus) => void;
  'auth:expiring': (info: AuthExpiring) => void;
  'session:closed': (info: SessionClosed) => void;
  debug: (trace: DebugTrace) => void;
}

export interface AgentToHubEvents {
  reply: (payload: AgentReply, ack: (res: SendAck) => void) => void;
  debug: (payload: AgentDebug, ack: (res: DebugAck) => void) => void;
}

export interface HubToAgentEvents {
  message: (message: AgentInboundMessage, ack: (res: RuntimeAck) => void) => void;
  'session:closed': (info: SessionClosed) => void;
}
