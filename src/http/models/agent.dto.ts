import type { AgentReply } from '../../protocol';
import type { Assert, Same } from '../../protocol/type-checks';
import type { MessagePartDto } from './message-part.dto';

/**
 * A bot id: 1–128 characters of `[A-Za-z0-9._:-]`.
 * @pattern ^[A-Za-z0-9._:-]{1,128}$
 * @example "support-bot"
 */
export type AgentId = string;

/** A bot and who is connected to it, counted over all replicas. */
export interface AgentDto {
  agentId: AgentId;
  /**
   * At least one runtime is connected.
   * @example true
   */
  online: boolean;
  /**
   * Connected agent runtimes.
   * @isInt
   * @example 2
   */
  runtimes: number;
  /**
   * Connected client sockets.
   * @isInt
   * @example 17
   */
  clients: number;
}

/** Body of `publishAgentMessage`: the same shape as an agent runtime's `reply` event. */
export interface AgentMessageDto {
  /**
   * The clientId to send to, or `*` for every client of the bot.
   * @minLength 1
   * @maxLength 256
   * @example "<user_id>"
   */
  to: string;
  /**
   * At most MAX_MESSAGE_BYTES UTF-8 bytes.
   * @example "Your order has shipped."
   */
  text: string;
  /**
   * Optional JSON object delivered with the text.
   * @example {"orderId":"<order_id>"}
   */
  data?: { [key: string]: unknown };
  /**
   * The message in parts (docs/parts.md): at most MESSAGE_MAX_PARTS; `text` is then empty or the
   * concatenation of the text parts.
   * @example [{"type":"text","text":"Your order has shipped."},{"type":"source","sourceId":"s1","url":"https://example.com/orders/42"}]
   */
  parts?: MessagePartDto[];
  /**
   * Id of the client message this answers.
   * @minLength 1
   * @maxLength 64
   * @example "0190f5c2-8a4b-7c3d-9e1f-123456789abc"
   */
  replyTo?: string;
}

/** What the hub assigned to a published message. */
export interface PublishedMessageDto {
  /**
   * UUIDv7 of the message.
   * @example "0190f5c2-8a4b-7c3d-9e1f-123456789abc"
   */
  id: string;
  /** @example "2025-01-15T09:30:00.000Z" */
  ts: Date;
}

/** The publish body against a runtime's `reply`: the build fails when they drift. */
export type AgentDtosMatchProtocol = [Assert<Same<AgentMessageDto, AgentReply>>];
