// What a RelayChat (relay-chat.ts) tells the page: its events and the types they carry (docs/browser-sdk.md).
import type {
  AgentActivity,
  AgentStatus,
  ClientConversationControl,
  ClientInboundMessage,
  MessageData,
  MessageEnd,
  MessagePart,
  MessagePartEvent,
  SessionInfo,
} from '../../../src/protocol';
import type { RelayChatError, RelayChatErrorCode } from './codes';
import type { MessageUpdate, StreamingMessage } from './streams';

/** `connecting` includes waiting to retry; `disconnected` is final (after `close()` or a terminal code). */
export type ConnectionState = 'connecting' | 'connected' | 'disconnected';

/** Options of `send`: a JSON object, and parts (`file` and `data` parts beside the text). */
export interface SendOptions {
  data?: MessageData;
  parts?: MessagePart[];
}

/** Payload of the `state` event. `code` says why, when there is a reason (always on a terminal stop). */
export interface StateChange {
  state: ConnectionState;
  code?: RelayChatErrorCode | (string & {});
  /**
   * On `connected`, when the handshake carried a `lastMessageId`: `true` when every message the chat
   * missed was replayed (as `message` events, before this state; when the hub cut the replay to its
   * byte bound, the newest were, and the chat pages the older ones in right after, as `message`
   * events too), `false` when none was (a `gap` event follows). Absent on a first connect with
   * nothing to resume from.
   */
  recovered?: boolean;
}

/** Payload of the `gap` event: the hub could not replay what came after `lastMessageId`. */
export interface Gap {
  lastMessageId: string;
}

/** Events of {@link RelayChat} and their payloads. */
export interface RelayChatEvents {
  state: StateChange;
  /**
   * A message of the conversation: the bot's (`author: 'agent'`), or the user's own sent from
   * another tab (`author: 'user'`). Messages missed while offline are replayed on reconnect;
   * duplicates are dropped by `id`, and this tab's own sends never come back through here. When the
   * hub cut the replay to its byte bound (it replays the newest missed messages), the chat pages the
   * older ones in after `connected` and hands them over here too, after newer ones: place messages
   * by `id` (UUIDv7, ordered by time), not by arrival.
   * Also when a streamed answer starts (`streaming: true`, with its text so far): `message:update`
   * follows as it grows, then `message:end`.
   */
  message: ClientInboundMessage | StreamingMessage;
  /** An open stream grew or changed: the whole message so far, its `parts` kept current. */
  'message:update': MessageUpdate;
  /** A part of a message that is no longer streaming changed (an approval decided after its stream ended). */
  'message:part': MessagePartEvent;
  /**
   * A stream ended: `text` is final and replaces what was shown; `status` says how (`complete`,
   * `error`, `cancelled`, `interrupted`, `timeout`). Also for a stream that ended while offline.
   */
  'message:end': MessageEnd;
  /** What the bot is doing (`thinking`, `typing`, `tool` with a label, `idle`); not replayed. */
  activity: AgentActivity;
  /**
   * Who answers changed (docs/handoff.md): `human` with the `operator` who joined (their messages
   * then come as `message` with `author: 'operator'` and `operator.name`), `bot` when the user is
   * back with the assistant, `waiting` when the bot asked for a person. Not replayed: history
   * holds the changes as `author: 'system'` messages.
   */
  control: ClientConversationControl;
  /** The bot went online or offline; also emitted once per session with the status at connect. */
  'agent:status': AgentStatus;
  /** Session details sent by the hub after each connect. */
  session: SessionInfo;
  /**
   * After a `connected` with `recovered: false`: messages may have been missed (too many, or the
   * hub's log no longer holds the last one seen); reload the conversation with `history()`.
   */
  gap: Gap;
  /** A failure the SDK recovers from (it retries) or that the integrator may want to log. */
  error: RelayChatError;
}
