/**
 * Names on the wire: namespaces, events, reserved ids. With `codes.ts`, `payloads.ts` and
 * `event-maps.ts` this is the relay protocol; nothing else spells an event name as a string. No
 * runtime dependencies, so the browser SDK imports it without weight.
 */
/** The client namespace, alone so the browser SDK bundles only its own. */
export const CLIENT_NAMESPACE = '/ws/client';

/** Socket.IO namespaces. */
export const Namespaces = {
  agent: '/ws/agent',
  client: CLIENT_NAMESPACE,
  /** The operator console's feed (docs/handoff.md). */
  operator: '/ws/operator',
} as const;

/**
 * The events of the client namespace, both directions: what the browser SDK bundles (a subset, so
 * it ships without the names only runtimes and operators use).
 */
export const ClientEvents = {
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
  /** H→C and H→A just before the hub ends a session. */
  sessionClosed: 'session:closed',
  /** C→H a page of the conversation's earlier messages (docs/protocol.md). */
  history: 'history',
  /** H→C a streamed message began, or is open on (re)connect: the text so far and its seq. */
  messageStart: 'message:start',
  /** H→C a piece of an open stream's text. */
  messageDelta: 'message:delta',
  /** H→C a whole part of a message: a new one, or one that changed (docs/parts.md). */
  messagePart: 'message:part',
  /** C→H a decision on a tool call's approval request; H→A the same, to the runtime. */
  approval: 'approval',
  /** H→C a stream ended: its final text and status. */
  messageEnd: 'message:end',
  /** H→C what the bot is doing; ephemeral, never logged or replayed. */
  agentActivity: 'agent:activity',
  /** C→H stop a stream (by id, or by the user's clientMessageId); H→A the same, to the owning runtime. */
  stop: 'stop',
  /** C→H a rating of a bot message; H→A the same, best effort. */
  feedback: 'feedback',
  /** H→C, H→A and H→O: who answers a conversation changed (docs/handoff.md). */
  conversationControl: 'conversation:control',
} as const;

/** Event names, by direction. Nothing else spells an event name as a string. */
// Pure, so that a bundle that uses only ClientEvents drops the rest (docs/browser-sdk.md, "Getting it": the size budget).
export const Events = /* @__PURE__ */ Object.assign({}, ClientEvents, {
  /** A→H a reply to one client or `'*'`. */
  reply: 'reply',
  /** A→H a trace; H→C the same, to admin sockets only. */
  debug: 'debug',
  /** A→H opens a streamed reply to one client (docs/streaming.md). */
  streamStart: 'stream:start',
  /** A→H a piece of text appended to an open stream. */
  streamDelta: 'stream:delta',
  /** A→H appends a new part to an open stream (docs/parts.md). */
  streamPart: 'stream:part',
  /** A→H merges fields into a part of an open stream. */
  streamUpdate: 'stream:update',
  /** A→H ends a stream with its final text and status. */
  streamEnd: 'stream:end',
  /** A→H what the bot is doing for one client (thinking, typing, a tool, idle). */
  activity: 'activity',
  /** A→H the bot asks for a person for one user (docs/handoff.md). */
  handoff: 'handoff',
  /** O→H follow one conversation live; acked with its newest messages and open streams. */
  conversationWatch: 'conversation:watch',
  /** H→O a message of a conversation an operator follows, or of one handed off. */
  conversationMessage: 'conversation:message',
  /** H→O right after an operator's connect. */
  operatorSession: 'operator:session',
} as const);

/** How a streamed message ended. A runtime may end with the first three; the hub sets the others. */
export const StreamStatuses = {
  complete: 'complete',
  error: 'error',
  cancelled: 'cancelled',
  interrupted: 'interrupted',
  timeout: 'timeout',
} as const;
export type StreamStatus = (typeof StreamStatuses)[keyof typeof StreamStatuses];
/** The statuses a runtime may give `stream:end`. */
export type AgentStreamStatus = 'complete' | 'error' | 'cancelled';

/** What `activity` says the bot is doing. `idle` clears it. */
export const ActivityStates = { thinking: 'thinking', typing: 'typing', tool: 'tool', idle: 'idle' } as const;
export type ActivityState = (typeof ActivityStates)[keyof typeof ActivityStates];

/** A rating of a bot message; `null` withdraws an earlier one. */
export type Rating = 'up' | 'down';

/** Longest `activity` label and `feedback` comment, in characters. */
export const ACTIVITY_LABEL_MAX = 128;
export const FEEDBACK_COMMENT_MAX = 1000;

/** Literal `clientId` of admin clients and the `to` value addressing every client of a bot. */
export const ADMIN_CLIENT_ID = 'admin';
export const ADMIN_ROLE = 'ADMIN';
export const BROADCAST_TO = '*';

/**
 * Who wrote a message of a conversation: the bot (replies, REST publishes, broadcasts), the user, an
 * operator who took the conversation over, or the hub (`system`: a change of control, docs/handoff.md).
 */
export const Authors = { agent: 'agent', user: 'user', operator: 'operator', system: 'system' } as const;
export type Author = (typeof Authors)[keyof typeof Authors];

/**
 * Who answers a conversation (docs/handoff.md): the bot (default), nobody yet because the bot asked
 * for a person (`waiting`), or one operator (`human`), while the bot only observes.
 */
export const ControlStates = { bot: 'bot', waiting: 'waiting', human: 'human' } as const;
export type ControlState = (typeof ControlStates)[keyof typeof ControlStates];

/** The role of an operator token (signed with ADMIN_JWT_SECRET, limited by its `agentIds`). */
export const OPERATOR_ROLE = 'OPERATOR';

/** Longest handoff `reason` and `summary`, in characters. */
export const HANDOFF_REASON_MAX = 500;
export const HANDOFF_SUMMARY_MAX = 4000;

/** `history` page size: default and largest. */
export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 100;

/** `agentId`: 1–128 characters of `[A-Za-z0-9._:-]`. */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
