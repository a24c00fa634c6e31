import type { Template } from './json-frames';
import type { ClientInboundMessage, ControlState, MessageFeedback } from '../protocol';

/** A message of a conversation log, exactly as it is (or was) delivered on the wire. */
export type LoggedMessage = ClientInboundMessage;

/** What {@link ConversationLog.readAfter} found after the client's last seen id. */
export type Recovery =
  | { ok: true; messages: LoggedMessage[] }
  /** `unknown`: the id is not in the log (trimmed, expired, never there); `too-many`: more than `max` are missing. */
  | { ok: false; reason: 'unknown' | 'too-many' };

/** A page of a conversation, oldest first, and whether older messages exist. */
export interface HistoryPage {
  messages: LoggedMessage[];
  hasMore: boolean;
}

/** Bounds every implementation applies. */
export interface ConversationLogLimits {
  /** Messages kept per conversation, and per bot for broadcasts (HISTORY_MAX_MESSAGES). */
  maxMessages: number;
  /** Seconds a log lives after its last append (HISTORY_TTL_S). */
  ttlS: number;
}

export type { Template };

/**
 * A message for other replicas: a sharded pub/sub channel and what to publish on it, the logged
 * message's JSON between `before` and `after` (so the message is serialized once, for both).
 */
export interface Publication extends Template {
  channel: string;
}

/**
 * The conversation log (docs/protocol.md, "Conversations and delivery guarantees"): per `(agentId, clientId)` every message in order, plus one log
 * per bot of its broadcasts (`to: '*'`), merged into every conversation's reads. Written before
 * delivery, so `append` resolving means the message survives this replica; a rejection means it
 * may not, and the sender must be told so.
 */
export interface ConversationLog {
  /**
   * Appends `message` to the conversation of `clientId`, or to the bot's broadcasts when
   * `clientId` is null. Idempotent by `message.id`: a retried delivery does not log twice.
   * `fresh`: the caller stamped `message.id` for this append, so it cannot be in the log yet and
   * the log need not look for it.
   */
  append(agentId: string, clientId: string | null, message: LoggedMessage, fresh?: boolean): Promise<void>;
  /**
   * {@link append} of a fresh message, then publishes `publication` on Redis in the same step, only
   * once the append succeeded: one round trip where an append and a publish would take two. Only
   * logs on Redis have it, and only a channel on the log's own server may be given (not on a
   * Redis Cluster).
   */
  appendThenPublish?(agentId: string, clientId: string | null, message: LoggedMessage, publication: Publication): Promise<void>;
  /**
   * A bot's fresh message to the conversation of `clientId`, unless an operator holds it
   * (docs/handoff.md): the control state is read in the same step as the append (one round trip on
   * Redis). Held: nothing is written or published, and it rejects with ConversationHeldError
   * (store/control-store.ts). Else as {@link append}, then, given `publication` (a channel on the
   * log's own server), as {@link appendThenPublish}; resolves with the state and whether it published.
   */
  appendReply(
    agentId: string,
    clientId: string,
    message: LoggedMessage,
    publication: Publication | null,
  ): Promise<{ published: boolean; control: ControlState }>;
  /** Every message after `afterId`, oldest first, all or nothing: at most `max` of them. */
  readAfter(agentId: string, clientId: string, afterId: string, max: number): Promise<Recovery>;
  /** The newest `limit` messages older than `before` (or the newest of all); an unknown `before` gives an empty page. */
  readBefore(agentId: string, clientId: string, before: string | undefined, limit: number): Promise<HistoryPage>;
  /**
   * Keeps (or with null withdraws) the user's feedback on bot message `id` of the conversation, shown
   * with the message by every read; false when `id` is not a bot message of that conversation.
   */
  setFeedback(agentId: string, clientId: string, id: string, feedback: MessageFeedback | null): Promise<boolean>;
  /**
   * The bot message `id` of the conversation as reads show it (a streamed one's final once it
   * ended), or null when `id` is not a bot message of that conversation (broadcasts are not looked at).
   */
  findBotMessage(agentId: string, clientId: string, id: string): Promise<LoggedMessage | null>;
  /**
   * Keeps `message` in place of bot message `message.id` of the conversation for every later read
   * (an approval decided on it: docs/parts.md); false when it is not a bot message there.
   */
  replaceBotMessage(agentId: string, clientId: string, message: LoggedMessage): Promise<boolean>;
  /** Erases one conversation (not the bot's broadcasts); true when it existed. */
  deleteConversation(agentId: string, clientId: string): Promise<boolean>;
  /** Erases every conversation of `clientId` with every bot; resolves with how many there were. */
  deleteUser(clientId: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * Merges a conversation's and the bot's broadcast entries, each sorted ascending by `compare`, into
 * one ascending list. Both implementations order entries by a sequence they assign on append.
 */
export function mergeSorted<T>(a: readonly T[], b: readonly T[], compare: (x: T, y: T) => number): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && compare(a[i], b[j]) <= 0)) out.push(a[i++]);
    else out.push(b[j++]);
  }
  return out;
}
