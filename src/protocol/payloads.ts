/**
 * Payloads of every event, the handshake `auth` objects and the acks; the typed event maps
 * Socket.IO's generics take are in `event-maps.ts`. Their schemas are in the `*.schema.ts` files
 * (server side only).
 *
 * Times on the wire are ISO 8601 UTC strings. Message ids are UUIDv7 assigned by the hub.
 */
import type { AckCode, HandshakeCode, SessionClosedCode } from './codes';
import type { ActivityState, AgentStreamStatus, Author, ControlState, Rating, StreamStatus } from './names';
import type { MessagePart, PartPatch } from './parts';

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

/**
 * A message's content (docs/parts.md): `text` is the concatenation of its text parts; `parts` is
 * absent on a plain text message (none, or one text part equal to `text`).
 */
export interface MessageContent {
  text: string;
  data?: MessageData;
  parts?: MessagePart[];
}

/** C→H `message`. Limits: `clientMessageId` 1–64 chars; `text` and the whole payload ≤ MAX_MESSAGE_BYTES; parts: text, file, data. */
export type ClientMessage = { clientMessageId: string } & MessageContent;

/** A→H `reply` (and the body of POST /agents/{agentId}/messages). */
export type AgentReply = { to: string; replyTo?: string } & MessageContent;

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
  parts?: MessagePart[];
  /** Set while an operator holds the conversation: the bot keeps the context but must not answer (docs/handoff.md). */
  observed?: true;
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
  parts?: MessagePart[];
  replyTo?: string;
  /** On `user` messages: the sender's `clientMessageId`. */
  clientMessageId?: string;
  /** On a streamed message that did not end `complete` (history, replay): how it ended. */
  status?: Exclude<StreamStatus, 'complete'>;
  /** On a bot message the user rated (history, REST): the latest rating. */
  feedback?: MessageFeedback;
  /** On a streamed message still open (history, REST): it shows as its start, text ''. */
  streaming?: true;
  /** On `operator` messages: who wrote it (docs/handoff.md). */
  operator?: OperatorName;
  /** On `system` messages: the control state the conversation entered. */
  control?: ControlState;
}

/** An operator as users see them: the token's `name` claim, else its `sub`. */
export interface OperatorName {
  name: string;
}

// Human handoff (docs/handoff.md) -------------------------------------------------------------

/** A→H `handoff`: the bot asks for a person for user `to`; `reason` ≤ 500 and `summary` ≤ 4000 chars. */
export type HandoffRequest = { to: string; reason?: string; summary?: string };

/** H→C `conversation:control`: who answers this user now. */
export interface ClientConversationControl {
  agentId: string;
  control: ControlState;
  /** Who joined, while `human`. */
  operator?: OperatorName;
}

/** H→A and H→O `conversation:control`: who answers the user `clientId` now, and since when. */
export interface ConversationControl {
  agentId: string;
  clientId: string;
  control: ControlState;
  since: string;
  operator?: OperatorName;
  /** What the bot said when it asked for a person (kept while `waiting` and `human`). */
  reason?: string;
  summary?: string;
}

/** O→H `conversation:watch`: follow this user's conversation live (replacing the one followed before). */
export type WatchRequest = { clientId: string };

/** Ack of `conversation:watch`: the conversation's newest messages (oldest first) and its open streams. */
export type WatchAck =
  { ok: true; control: ConversationControl; messages: ClientInboundMessage[]; streams: MessageStart[] } | { ok: false; error: AckError };

/** H→O `conversation:message`: a message of a conversation an operator follows or that is handed off. */
export interface OperatorFeedMessage {
  clientId: string;
  message: ClientInboundMessage;
}

/** H→O `operator:session`: right after connect. */
export interface OperatorSession {
  agentId: string;
  /** The name users see for this operator. */
  name: string;
  admin: boolean;
}

export interface OperatorAuth {
  token: string;
  agentId: string;
}

/** The latest rating of a bot message, as kept in the log. */
export interface MessageFeedback {
  rating: Rating;
  comment?: string;
  ts: string;
}

// Streamed replies (docs/streaming.md) -------------------------------------------------------

/** A→H `stream:start`: a streamed reply to one client (never `'*'`), optionally with its first parts. */
export type StreamStart = { to: string; replyTo?: string; data?: MessageData; parts?: MessagePart[] };

/**
 * A→H `stream:delta`: `text` (non-empty) appended to part `index` (a text or reasoning part, or a
 * tool call's raw input while it streams); without `index`, to the last part when it is text, else
 * to a new text part.
 */
export type StreamDelta = { id: string; text: string; index?: number };

/** A→H `stream:part`: appends a new part to the open stream `id`. */
export type StreamPart = { id: string; part: MessagePart };

/** A→H `stream:update`: merges `part`'s fields into part `index` (its type never changes; a tool's state only moves forward). */
export type StreamUpdate = { id: string; index: number; part: PartPatch };

/** A→H `stream:end`: `text` and `parts`, when given, replace what accumulated; `status` defaults to `complete`. */
export type StreamEnd = { id: string; text?: string; data?: MessageData; parts?: MessagePart[]; status?: AgentStreamStatus };

/** C→H `approval`: the user's decision on a tool call's approval request. */
export type ApprovalRequest = { messageId: string; approvalId: string; approved: boolean; reason?: string };
/** O→H `approval`: an operator's decision in one of the bot's conversations (docs/handoff.md); acked as a user's. */
export type OperatorApprovalRequest = ApprovalRequest & { clientId: string };

/** A recorded approval decision: the first one given wins. */
export interface ApprovalDecision {
  approved: boolean;
  reason?: string;
  /** The clientId that decided. */
  decidedBy: string;
  ts: string;
}

/** H→A `approval`: a user's decision, to the runtime (acked; redelivered until acked, dropped again by `id`). */
export interface AgentApproval {
  /** The approval id. */
  id: string;
  messageId: string;
  toolCallId: string;
  from: string;
  approved: boolean;
  reason?: string;
  ts: string;
}

/** A→H `activity`: what the bot is doing for client `to`; `label` ≤ 128 chars. */
export type ActivityUpdate = { to: string; state: ActivityState; label?: string };

/** C→H `stop`: a stream of this conversation by `id`, or the stream answering the user's message `clientMessageId`. */
export type StopRequest = { id: string } | { clientMessageId: string };

/** C→H `feedback`: a rating of a bot message of this conversation; `null` withdraws it. */
export type FeedbackRequest = { id: string; rating: Rating | null; comment?: string };

/** H→C `message:start`: a stream began, or is still open at (re)connect with `text` so far holding `seq` deltas. */
export interface MessageStart {
  id: string;
  ts: string;
  agentId: string;
  author: 'agent';
  replyTo?: string;
  data?: MessageData;
  text: string;
  /** The parts so far (absent while the stream is plain text). */
  parts?: MessagePart[];
  seq: number;
}

/** H→C `message:delta`: append `text` when `seq` is one more than the deltas held. */
export interface MessageDelta {
  id: string;
  seq: number;
  text: string;
  /** The part it appends to; the number of parts held opens a new text part. */
  index: number;
}

/** H→C `message:part`: the whole part at `index`, a new one (`index` = the number held) or a replacement; `seq` 0 on a message that is no longer streaming. */
export interface MessagePartEvent {
  id: string;
  seq: number;
  index: number;
  part: MessagePart;
}

/** H→C `message:end`: `text` is final and replaces what the client holds. */
export interface MessageEnd {
  id: string;
  ts: string;
  agentId: string;
  author: 'agent';
  text: string;
  data?: MessageData;
  parts?: MessagePart[];
  replyTo?: string;
  status: StreamStatus;
}

/** H→C `agent:activity` (ephemeral). */
export interface AgentActivity {
  agentId: string;
  state: ActivityState;
  label?: string;
  ts: string;
}

/** H→A `stop`: end the stream `id` (or the answer to the client message `messageId`) with status `cancelled`. */
export interface AgentStop {
  id?: string;
  messageId?: string;
  from: string;
}

/** H→A `feedback` (best effort). */
export interface AgentFeedback {
  id: string;
  from: string;
  rating: Rating | null;
  comment?: string;
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
  /**
   * Present (true) only with `recovered: true` when the replay was cut to REPLAY_MAX_BYTES (or the
   * user's read budget): it held the newest missed messages, and the older ones (after
   * `lastMessageId`, before the oldest replayed, or before the newest message when none was) are
   * read with `history`.
   */
  hasMore?: true;
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
/** Ack of `stream:delta` when the runtime asks for one: the delta's `seq`. */
export type StreamDeltaAck = { ok: true; seq: number } | { ok: false; error: AckError };
/** Ack of `stream:part`: the change's `seq` and the new part's `index`. */
export type StreamPartAck = { ok: true; seq: number; index: number } | { ok: false; error: AckError };
/** Ack of `approval`: the recorded decision; APPROVAL_DECIDED carries it too. */
export type ApprovalAck = { ok: true; decision: ApprovalDecision } | { ok: false; error: AckError; decision?: ApprovalDecision };
/** Ack of `activity`, `stop` and `feedback`. */
export type OkAck = { ok: true } | { ok: false; error: AckError };
/** The runtime's ack of an H→A `message` (the agent SDK sends `{ ok: true }` on receipt). */
export type RuntimeAck = { ok: boolean };
/** Ack of `history`: messages oldest first. */
export type HistoryAck = { ok: true; messages: ClientInboundMessage[]; hasMore: boolean } | { ok: false; error: AckError };
