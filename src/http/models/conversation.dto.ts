import type { ClientInboundMessage, MessageFeedback } from '../../protocol';
import type { Assert, Same } from '../../protocol/type-checks';
import type { MessagePartDto } from './message-part.dto';

/** A message of a conversation, as it was delivered on the wire (H→C `message`). */
export interface ConversationMessageDto {
  /**
   * UUIDv7 of the message.
   * @example "0190f5c2-8a4b-7c3d-9e1f-123456789abc"
   */
  id: string;
  /** @example "2025-01-15T09:30:00.000Z" */
  ts: Date;
  /** @example "support-bot" */
  agentId: string;
  /**
   * `agent` for replies, REST publishes and broadcasts; `user` for the user's messages; `operator`
   * for a person who took the conversation over; `system` for a change of who answers (docs/handoff.md).
   * @example "agent"
   */
  author: 'agent' | 'user' | 'operator' | 'system';
  /** @example "Your order has shipped." */
  text: string;
  /**
   * Optional JSON object delivered with the text.
   * @example {"orderId":"<order_id>"}
   */
  data?: { [key: string]: unknown };
  /**
   * The message in parts (docs/parts.md); absent on a plain text message.
   * @example [{"type":"reasoning","text":"Look up the order."},{"type":"text","text":"Your order has shipped."}]
   */
  parts?: MessagePartDto[];
  /**
   * Id of the client message an agent message answers.
   * @example "0190f5c2-8a4b-7c3d-9e1f-123456789abb"
   */
  replyTo?: string;
  /**
   * On `user` messages: the sender's `clientMessageId`.
   * @example "<client_message_id>"
   */
  clientMessageId?: string;
  /**
   * On a streamed message that did not end `complete`: how it ended (absent when complete;
   * docs/streaming.md).
   * @example "cancelled"
   */
  status?: 'error' | 'cancelled' | 'interrupted' | 'timeout';
  feedback?: MessageFeedbackDto;
  /**
   * On a streamed message still open: it shows as its start, text `''` (docs/streaming.md).
   * @example true
   */
  streaming?: true;
  operator?: OperatorNameDto;
  /**
   * On `system` messages: the control state the conversation entered.
   * @example "human"
   */
  control?: 'bot' | 'waiting' | 'human';
}

/** On `operator` messages, and on a conversation an operator holds: the operator as users see them (the token's `name` claim, else its `sub`). */
export interface OperatorNameDto {
  /** @example "Ana" */
  name: string;
}

/** On a bot message the user rated: the latest rating (a later one replaces it; a withdrawn one is absent). */
export interface MessageFeedbackDto {
  /** @example "up" */
  rating: 'up' | 'down';
  /**
   * At most 1000 characters.
   * @example "Clear and correct."
   */
  comment?: string;
  /** @example "2025-01-15T09:31:00.000Z" */
  ts: Date;
}

/** The DTOs against the wire types (times are `Date` here, ISO strings on the wire): the build fails when they drift. */
export type ConversationDtosMatchProtocol = [
  Assert<Same<Omit<ConversationMessageDto, 'ts' | 'feedback'>, Omit<ClientInboundMessage, 'ts' | 'feedback'>>>,
  Assert<Same<Omit<MessageFeedbackDto, 'ts'>, Omit<MessageFeedback, 'ts'>>>,
];
