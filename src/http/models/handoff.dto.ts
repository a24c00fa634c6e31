import type { OperatorNameDto } from './conversation.dto';
import type { MessagePartDto } from './message-part.dto';

/**
 * Who answers a conversation (docs/handoff.md): the bot, nobody yet (`waiting`: the bot asked
 * for a person), or one operator (`human`).
 * @example "waiting"
 */
export type ControlStateDto = 'bot' | 'waiting' | 'human';

/** A conversation's control state. */
export interface ConversationControlDto {
  /** @example "support-bot" */
  agentId: string;
  /** @example "<user_id>" */
  clientId: string;
  control: ControlStateDto;
  /**
   * When the conversation entered this state; absent for one never handed off.
   * @example "2025-01-15T09:30:00.000Z"
   */
  since?: Date;
  /**
   * Why the bot asked for a person.
   * @example "Asks for a refund above the bot's limit"
   */
  reason?: string;
  /**
   * What the bot tells the operator about the conversation so far.
   * @example "Order <order_id> arrived damaged; the user wants a refund."
   */
  summary?: string;
  operator?: OperatorNameDto;
}

/** The newest message of a conversation, for the list. */
export interface LastMessageDto {
  /** @example "user" */
  author: 'agent' | 'user' | 'operator' | 'system';
  /** @example "I want to talk to a person" */
  text: string;
  /** @example "2025-01-15T09:30:00.000Z" */
  ts: Date;
}

/** A conversation in an operator's list: its control state, whether the user is online, its newest message. */
export interface ConversationSummaryDto extends ConversationControlDto {
  /**
   * At least one tab of the user is connected.
   * @example true
   */
  online: boolean;
  lastMessage?: LastMessageDto;
}

/** Body of `createOperatorMessage`. */
export interface OperatorMessageDto {
  /**
   * At most MAX_MESSAGE_BYTES UTF-8 bytes; empty only when `parts` holds the message.
   * @example "Hi, I'm Ana from support. Let me look at your order."
   */
  text: string;
  /**
   * Optional JSON object delivered with the text.
   * @example {"ticket":"<ticket_id>"}
   */
  data?: { [key: string]: unknown };
  /**
   * The message in parts (docs/parts.md), checked as a bot's are: at most MESSAGE_MAX_PARTS; `text`
   * is then empty or the concatenation of the text parts.
   * @example [{"type":"text","text":"Here is the return form."},{"type":"file","url":"https://example.com/returns.pdf","mediaType":"application/pdf","filename":"returns.pdf"}]
   */
  parts?: MessagePartDto[];
}

/** An operator message as it was logged and delivered. */
export interface OperatorMessageSentDto {
  /**
   * UUIDv7 of the message.
   * @example "0190f5c2-8a4b-7c3d-9e1f-123456789abc"
   */
  id: string;
  /** @example "2025-01-15T09:31:00.000Z" */
  ts: Date;
  operator: OperatorNameDto;
}
