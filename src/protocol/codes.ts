/**
 * Every code a peer of the hub can receive, as data: what it means and whether retrying (with a
 * fresh token, after a pause, on another replica) may succeed. The SDKs decide on `retryable`
 * from here; docs/protocol.md, docs/rest.md and the AsyncAPI document list these catalogues.
 */
import type { AckError } from './payloads';

/**
 * Handshake refusals: codes carried by `connect_error` as `err.data = { code, retryable }`.
 * Retryable codes may succeed on a later attempt (with a fresh token, after a pause, elsewhere).
 */
export const HandshakeCodes = {
  API_KEY_INVALID: {
    retryable: false,
    description: 'the apiKey is missing or not one the hub accepts (AGENT_API_KEYS, or a managed key with the agent:connect scope)',
  },
  AGENT_ID_REQUIRED: { retryable: false, description: 'agentId missing from the handshake auth' },
  AGENT_ID_INVALID: { retryable: false, description: 'agentId is not 1–128 chars of [A-Za-z0-9._:-]' },
  TOKEN_REQUIRED: { retryable: false, description: 'token missing from the handshake auth' },
  TOKEN_INVALID: {
    retryable: false,
    description: 'token fails verification (signature, algorithm, issuer, audience, exp required, claims)',
  },
  TOKEN_EXPIRED: { retryable: true, description: 'token is past exp; a fresh token may work' },
  SUB_REQUIRED: { retryable: false, description: 'token has no non-empty string sub' },
  SUB_RESERVED: {
    retryable: false,
    description:
      'sub that reads as "admin" (compared without invisible characters, after NFKC, case folding and mapping look-alike letters: " Admin", "admin\\u200b", Cyrillic "аdmin") without the ADMIN role',
  },
  AGENT_NOT_ALLOWED: {
    retryable: false,
    description:
      "agentId is not matched by the token's agentIds claim (exact ids, or prefixes ending in *), or not among the managed API key's agentIds",
  },
  USER_DEACTIVATED: { retryable: false, description: 'the user (sub) is deactivated' },
  ORIGIN_NOT_ALLOWED: { retryable: false, description: 'the page Origin is not in CORS_ORIGINS' },
  RATE_LIMITED: { retryable: true, description: 'too many failed handshakes from this address; retry later' },
  SERVER_SHUTTING_DOWN: { retryable: true, description: 'this replica is draining; retry (another replica will answer)' },
  SERVER_UNAVAILABLE: { retryable: true, description: 'a check could not run (shared state unreachable); retry later' },
  SERVER_BUSY: {
    retryable: true,
    description: 'this replica is past its memory high-water mark (MEMORY_HIGH_WATER_RATIO); retry (another replica will answer)',
  },
  OPERATOR_REQUIRED: {
    retryable: false,
    description: 'operator namespace: the token is not an operator or admin token signed with ADMIN_JWT_SECRET (docs/handoff.md)',
  },
  AGENT_RUNTIME_LIMIT: {
    retryable: true,
    description: 'the bot already has MAX_RUNTIMES_PER_AGENT runtimes connected (agent namespace); retry once one has left',
  },
} as const;
export type HandshakeCode = keyof typeof HandshakeCodes;

/** Codes of `session:closed`. */
export const SessionClosedCodes = {
  TOKEN_EXPIRED: { retryable: true, description: 'the token reached exp without auth:refresh' },
  USER_DEACTIVATED: { retryable: false, description: 'the user was deactivated' },
  RATE_LIMITED: { retryable: true, description: 'the socket kept sending after being rate limited' },
  API_KEY_REVOKED: { retryable: false, description: 'the managed API key the runtime connected with was deleted (agent namespace)' },
  SERVER_UNAVAILABLE: {
    retryable: true,
    description:
      "this replica's Redis subscription dropped, so messages for the session may have passed it by; reconnect with lastMessageId to get them replayed",
  },
} as const;
export type SessionClosedCode = keyof typeof SessionClosedCodes;

/** Codes of error acks to `message`, `reply`, `debug` and `auth:refresh`. */
export const AckCodes = {
  AGENT_OFFLINE: { retryable: true, description: 'no runtime of the bot is connected' },
  TIMEOUT: { retryable: true, description: 'the chosen runtime did not acknowledge within AGENT_ACK_TIMEOUT_MS' },
  INVALID_PAYLOAD: { retryable: false, description: 'the payload does not match the event schema' },
  PAYLOAD_TOO_LARGE: { retryable: false, description: 'text or the whole payload exceeds MAX_MESSAGE_BYTES' },
  RATE_LIMITED: {
    retryable: true,
    description:
      "over a rate budget: this socket's events, this user's messages, feedback or stops over all their sockets, or (reply, activity, stream:start, stream:delta) the bot's deliveries on this replica",
  },
  TOKEN_INVALID: { retryable: false, description: 'the refresh token fails verification' },
  TOKEN_EXPIRED: { retryable: false, description: 'the refresh token is already expired' },
  SUB_MISMATCH: { retryable: false, description: 'the refresh token has another sub or admin status' },
  USER_DEACTIVATED: { retryable: false, description: 'auth:refresh of a deactivated user; the session is closed next' },
  SERVER_UNAVAILABLE: { retryable: true, description: 'the hub could not reach its shared state; retry later' },
  STREAM_NOT_FOUND: {
    retryable: false,
    description: 'no open stream with this id that the sender may act on (ended, never started, or owned by another runtime or user)',
  },
  STREAM_LIMIT: { retryable: false, description: 'this runtime socket already has STREAM_MAX_OPEN streams open' },
  MESSAGE_NOT_FOUND: {
    retryable: false,
    description: "feedback or an approval on an id that is not a bot message (or approval request) of the sender's conversation",
  },
  APPROVAL_DECIDED: {
    retryable: false,
    description: 'the approval was already decided otherwise (another tab or device); the ack carries the recorded decision',
  },
  APPROVAL_EXPIRED: { retryable: false, description: 'the approval was asked for more than APPROVAL_TTL_S ago' },
  QUOTA_EXCEEDED: {
    retryable: false,
    description:
      "the bot's storage quota is full: BOT_MAX_OPEN_STREAMS streams open over all its runtimes and replicas, or its open streams' text holding BOT_STORAGE_MAX_BYTES (its oldest conversations are dropped to make room before this); nothing was stored or sent",
  },
  OPERATOR_REQUIRED: {
    retryable: false,
    description:
      "an event of the operator's side (conversation:control, conversation:watch) sent on a user's or a bot's socket: only /ws/operator consoles send it; nothing was done (docs/handoff.md)",
  },
  CONVERSATION_HELD: {
    retryable: false,
    description:
      'an operator holds the conversation: the bot may not answer (reply, stream:start) nor ask for a person; nothing was delivered (docs/handoff.md)',
  },
} as const;
export type AckCode = keyof typeof AckCodes;

/** An error ack with the code's description as `message` unless a more specific one is given. */
export function errorAck(code: AckCode, message: string = AckCodes[code].description): { ok: false; error: AckError } {
  return { ok: false, error: { code, message } };
}

/**
 * `code` of REST problem+json responses, with the HTTP status each comes with. A code that also
 * exists in the handshake catalogue means the same condition there.
 */
export const ProblemCodes = {
  VALIDATION_FAILED: { status: 400, description: 'the request is invalid; `errors` lists the fields' },
  BAD_REQUEST: { status: 400, description: 'the request could not be read' },
  AUTHORIZATION_MALFORMED: { status: 401, description: 'the Authorization header is not "Bearer <token>"' },
  TOKEN_REQUIRED: { status: 401, description: 'no bearer token' },
  TOKEN_INVALID: { status: 401, description: 'the token fails verification, as in the handshake' },
  TOKEN_EXPIRED: { status: 401, description: 'the token is past exp' },
  SUB_REQUIRED: { status: 401, description: 'the token has no non-empty string sub' },
  SUB_RESERVED: { status: 401, description: 'the token has a sub that reads as "admin" (see reserved subjects) without the ADMIN role' },
  API_KEY_REQUIRED: { status: 401, description: 'no api-key header (REST only: the handshake has no separate code for a missing key)' },
  API_KEY_INVALID: { status: 401, description: 'the key is not one the hub accepts (unknown or deleted), as in the handshake' },
  METRICS_TOKEN_REQUIRED: { status: 401, description: '/metrics needs Authorization: Bearer METRICS_TOKEN' },
  ROLE_REQUIRED: {
    status: 403,
    description: 'the token lacks the role the operation needs (ADMIN routes: an admin token signed with ADMIN_JWT_SECRET)',
  },
  SCOPE_REQUIRED: { status: 403, description: 'the api key lacks the scope the operation needs' },
  USER_DEACTIVATED: { status: 403, description: 'the user is deactivated' },
  AGENT_NOT_ALLOWED: { status: 403, description: "the bot is not in the api key's agentIds" },
  RECIPIENT_NOT_ALLOWED: { status: 403, description: 'the api key may not publish to "admin" (adminRecipient is false)' },
  NOT_FOUND: { status: 404, description: 'no such resource or route' },
  EMAIL_TAKEN: { status: 409, description: 'another user has this email' },
  CONVERSATION_HELD: { status: 409, description: 'another operator holds the conversation; `holder` names them (docs/handoff.md)' },
  CONVERSATION_NOT_HELD: {
    status: 409,
    description: 'the conversation is not held by this operator: take it over first (docs/handoff.md)',
  },
  ID_TAKEN: { status: 409, description: 'a user with this id exists' },
  PAYLOAD_TOO_LARGE: { status: 413, description: 'the body exceeds REST_BODY_LIMIT_BYTES or the message exceeds MAX_MESSAGE_BYTES' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'the body is not application/json' },
  RATE_LIMITED: {
    status: 429,
    description: "too many failed authentications from this address, or (publish) the bot's delivery budget is spent; see Retry-After",
  },
  QUOTA_EXCEEDED: {
    status: 507,
    description:
      "(publish) the bot's storage quota is full, as the ack code QUOTA_EXCEEDED: its open streams hold BOT_STORAGE_MAX_BYTES; nothing was logged or sent",
  },
  INTERNAL: { status: 500, description: 'an unexpected error; logged by the hub' },
  SERVICE_UNAVAILABLE: { status: 503, description: 'the conversation log is unreachable; nothing was done, retry later' },
} as const;
export type ProblemCode = keyof typeof ProblemCodes;
