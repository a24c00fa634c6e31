/**
 * The relay protocol: every namespace, event name, payload schema and error code in one place.
 * It has no runtime dependencies so the browser SDK can import it without weight; the TypeBox
 * schemas that validate these payloads live in `protocol.schemas.ts`, checked against these types.
 *
 * Times on the wire are ISO 8601 UTC strings. Message ids are UUIDv7 assigned by the hub.
 */
/** Socket.IO namespaces. */
export const Namespaces = {
  agent: '/ws/agent',
  client: '/ws/client',
} as const;

/** Event names, by direction. Nothing else spells an event name as a string. */
export const Events = {
  /** C→H a chat message; H→C a message from the bot; H→A a client message. */
  message: 'message',
  /** H→C right after connect. */
  session: 'session',
  /** H→C when the bot goes from 0 to ≥ 1 runtimes or back. */
  agentStatus: 'agent:status',
  /** H→C 60 s before the token expires. */
  authExpiring: 'auth:expiring',
  /** C→H a fresh token for the running session. */
  authRefresh: 'auth:refresh',
  /** H→C just before the hub ends a session. */
  sessionClosed: 'session:closed',
  /** A→H a reply to one client or `'*'`. */
  reply: 'reply',
  /** A→H a trace; H→C the same, to admin sockets only. */
  debug: 'debug',
} as const;

/** Literal `clientId` of admin clients and the `to` value addressing every client of a bot. */
export const ADMIN_CLIENT_ID = 'admin';
export const ADMIN_ROLE = 'ADMIN';
export const BROADCAST_TO = '*';

/** `agentId`: 1–128 characters of `[A-Za-z0-9._:-]`. */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

// ---------------------------------------------------------------------------------------------
// Handshake

/**
 * Codes carried by `connect_error` as `err.data = { code, retryable }`.
 * Retryable codes may succeed on a later attempt (with a fresh token, after a pause, elsewhere).
 */
export const HandshakeCodes = {
  API_KEY_INVALID: { retryable: false, description: 'apiKey missing or not one of AGENT_API_KEYS' },
  AGENT_ID_REQUIRED: { retryable: false, description: 'agentId missing from the handshake auth' },
  AGENT_ID_INVALID: { retryable: false, description: 'agentId is not 1–128 chars of [A-Za-z0-9._:-]' },
  TOKEN_REQUIRED: { retryable: false, description: 'token missing from the handshake auth' },
  TOKEN_INVALID: { retryable: false, description: 'token fails verification (signature, algorithm, issuer, audience, exp required, claims)' },
  TOKEN_EXPIRED: { retryable: true, description: 'token is past exp; a fresh token may work' },
  SUB_REQUIRED: { retryable: false, description: 'token has no non-empty string sub' },
  SUB_RESERVED: { retryable: false, description: 'sub "admin" without the ADMIN role' },
  AGENT_NOT_ALLOWED: { retryable: false, description: "agentId is not in the token's agentIds claim" },
  USER_DEACTIVATED: { retryable: false, description: 'the user (sub) is deactivated' },
  ORIGIN_NOT_ALLOWED: { retryable: false, description: 'the page Origin is not in CORS_ORIGINS' },
  RATE_LIMITED: { retryable: true, description: 'too many failed handshakes from this address; retry later' },
  SERVER_SHUTTING_DOWN: { retryable: true, description: 'this replica is draining; retry (another replica will answer)' },
  SERVER_UNAVAILABLE: { retryable: true, description: 'a check could not run (shared state unreachable); retry later' },
} as const;
export type HandshakeCode = keyof typeof HandshakeCodes;

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
  text: string;
  data?: MessageData;
  replyTo?: string;
}

/** H→C `session`. */
export interface SessionInfo {
  clientId: string;
  agentId: string;
  agentOnline: boolean;
  /** ISO time the token expires, or null for a token without `exp`. */
  tokenExpiresAt: string | null;
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

/** Codes of `session:closed`. */
export const SessionClosedCodes = {
  TOKEN_EXPIRED: { retryable: true, description: 'the token reached exp without auth:refresh' },
  USER_DEACTIVATED: { retryable: false, description: 'the user was deactivated' },
  RATE_LIMITED: { retryable: true, description: 'the socket kept sending after being rate limited' },
} as const;
export type SessionClosedCode = keyof typeof SessionClosedCodes;

/** H→C `session:closed`. */
export interface SessionClosed {
  code: SessionClosedCode;
  retryable: boolean;
}

// ---------------------------------------------------------------------------------------------
// Acks

/** Codes of error acks to `message`, `reply`, `debug` and `auth:refresh`. */
export const AckCodes = {
  AGENT_OFFLINE: 'no runtime of the bot is connected',
  TIMEOUT: 'the chosen runtime did not acknowledge within AGENT_ACK_TIMEOUT_MS',
  INVALID_PAYLOAD: 'the payload does not match the event schema',
  PAYLOAD_TOO_LARGE: 'text or the whole payload exceeds MAX_MESSAGE_BYTES',
  RATE_LIMITED: 'this socket sends faster than MESSAGE_RATE_PER_S',
  TOKEN_INVALID: 'the refresh token fails verification',
  TOKEN_EXPIRED: 'the refresh token is already expired',
  SUB_MISMATCH: 'the refresh token has another sub or admin status',
  SERVER_UNAVAILABLE: 'the hub could not reach its shared state; retry later',
} as const;
export type AckCode = keyof typeof AckCodes;

export interface AckError {
  code: AckCode;
  message: string;
}

/** Ack of a delivered `message`, a `reply`, a `debug`. */
export type SendAck = { ok: true; id: string; ts: string } | { ok: false; error: AckError };
export type DebugAck = { ok: true } | { ok: false; error: AckError };
export type RefreshAck = { ok: true; tokenExpiresAt: string | null } | { ok: false; error: AckError };

// ---------------------------------------------------------------------------------------------
// Typed event maps for Socket.IO generics

export interface ClientToHubEvents {
  message: (payload: ClientMessage, ack: (res: SendAck) => void) => void;
  'auth:refresh': (payload: AuthRefresh, ack: (res: RefreshAck) => void) => void;
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
  message: (message: AgentInboundMessage, ack: (res: { ok: boolean }) => void) => void;
}
