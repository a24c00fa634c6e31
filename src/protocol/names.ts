/**
 * Names on the wire: namespaces, events, reserved ids. With `codes.ts` and `payloads.ts` this is
 * the relay protocol; nothing else spells an event name as a string. No runtime dependencies, so
 * the browser SDK imports it without weight.
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
  /** H→C and H→A just before the hub ends a session. */
  sessionClosed: 'session:closed',
  /** C→H a page of the conversation's earlier messages (docs/protocol.md). */
  history: 'history',
  /** A→H a reply to one client or `'*'`. */
  reply: 'reply',
  /** A→H a trace; H→C the same, to admin sockets only. */
  debug: 'debug',
} as const;

/** Literal `clientId` of admin clients and the `to` value addressing every client of a bot. */
export const ADMIN_CLIENT_ID = 'admin';
export const ADMIN_ROLE = 'ADMIN';
export const BROADCAST_TO = '*';

/** Who wrote a message of a conversation: the bot (replies, REST publishes, broadcasts) or the user. */
export const Authors = { agent: 'agent', user: 'user' } as const;
export type Author = (typeof Authors)[keyof typeof Authors];

/** `history` page size: default and largest. */
export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 100;

/** `agentId`: 1–128 characters of `[A-Za-z0-9._:-]`. */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
