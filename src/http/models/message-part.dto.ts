import type { Assert, Same } from '../../protocol/type-checks';
import type {
  DataPart,
  FilePart,
  MessagePart,
  ReasoningPart,
  SourcePart,
  Suggestion,
  SuggestionsPart,
  TextPart,
  ToolApproval,
  ToolPart,
  ToolState,
} from '../../protocol';

/**
 * The parts of a message (docs/parts.md) as the REST API describes them. tsoa reads interfaces, not
 * TypeBox schemas, so these repeat `src/protocol/parts.schema.ts` for the OpenAPI document; the
 * checks at the end fail the build when one and its protocol type stop being mutually assignable.
 */

/** The answer: a message's text is the concatenation of its text parts. */
export interface TextPartDto {
  /** @example "text" */
  type: 'text';
  /**
   * Markdown.
   * @example "It is **sunny** in Paris."
   */
  text: string;
}

/** The bot's reasoning, shown collapsed. */
export interface ReasoningPartDto {
  /** @example "reasoning" */
  type: 'reasoning';
  /** @example "The user asks about the weather: call the forecast tool." */
  text: string;
}

/**
 * A tool call's state; it only moves forward (input-streaming → input-available →
 * approval-requested → approval-responded → output-*).
 * @example "approval-requested"
 */
export type ToolStateDto =
  | 'input-streaming'
  | 'input-available'
  | 'approval-requested'
  | 'approval-responded'
  | 'output-available'
  | 'output-error'
  | 'output-denied';

/** A tool call's request for approval, with the user's decision once recorded. */
export interface ToolApprovalDto {
  /**
   * @minLength 1
   * @maxLength 128
   * @example "appr_1"
   */
  id: string;
  /**
   * Set by the hub from the recorded decision.
   * @example true
   */
  approved?: boolean;
  /**
   * @maxLength 1000
   * @example "Fine, send it."
   */
  reason?: string;
  /**
   * The clientId that decided.
   * @example "<user_id>"
   */
  decidedBy?: string;
  /**
   * @format date-time
   * @example "2025-01-15T09:31:00.000Z"
   */
  ts?: string;
}

/** A tool call, as a step with its state. */
export interface ToolPartDto {
  /** @example "tool" */
  type: 'tool';
  /**
   * @minLength 1
   * @maxLength 128
   * @example "call_1"
   */
  toolCallId: string;
  /**
   * @minLength 1
   * @maxLength 128
   * @example "send_email"
   */
  toolName: string;
  state: ToolStateDto;
  /**
   * The call's input (any JSON).
   * @example {"to":"ana@example.com"}
   */
  input?: unknown;
  /**
   * The raw input JSON as it streamed.
   * @example "{\"to\":\"ana@example.com\"}"
   */
  inputText?: string;
  /**
   * The call's output (any JSON).
   * @example {"sent":true}
   */
  output?: unknown;
  /**
   * @maxLength 4096
   * @example "The mail server refused the message."
   */
  errorText?: string;
  /**
   * @maxLength 256
   * @example "Send the summary"
   */
  title?: string;
  approval?: ToolApprovalDto;
}

/** A citation. */
export interface SourcePartDto {
  /** @example "source" */
  type: 'source';
  /**
   * @minLength 1
   * @maxLength 128
   * @example "src_1"
   */
  sourceId: string;
  /**
   * An absolute http: or https: URL.
   * @pattern ^[Hh][Tt][Tt][Pp][Ss]?://[^\s]+$
   * @maxLength 2048
   * @example "https://en.wikipedia.org/wiki/Paris"
   */
  url?: string;
  /**
   * @maxLength 512
   * @example "Paris"
   */
  title?: string;
  /**
   * @maxLength 128
   * @example "text/html"
   */
  mediaType?: string;
  /**
   * @maxLength 256
   * @example "paris.html"
   */
  filename?: string;
}

/** A file by URL: an image preview or a file card. */
export interface FilePartDto {
  /** @example "file" */
  type: 'file';
  /**
   * An absolute http: or https: URL.
   * @pattern ^[Hh][Tt][Tt][Pp][Ss]?://[^\s]+$
   * @maxLength 2048
   * @example "https://example.com/chart.png"
   */
  url: string;
  /**
   * @minLength 1
   * @maxLength 128
   * @example "image/png"
   */
  mediaType: string;
  /**
   * @maxLength 256
   * @example "chart.png"
   */
  filename?: string;
  /**
   * Bytes.
   * @isInt
   * @minimum 0
   * @example 48213
   */
  size?: number;
}

/** Structured data for an integrator's renderer. */
export interface DataPartDto {
  /** @example "data" */
  type: 'data';
  /**
   * The renderer: 1–64 chars of [A-Za-z0-9_-].
   * @pattern ^[A-Za-z0-9_-]{1,64}$
   * @example "weather-card"
   */
  name: string;
  /**
   * @minLength 1
   * @maxLength 128
   * @example "d1"
   */
  id?: string;
  /**
   * Any JSON value.
   * @example {"tempC":21}
   */
  data: unknown;
}

/** One quick reply. */
export interface SuggestionDto {
  /**
   * @minLength 1
   * @maxLength 200
   * @example "Tomorrow?"
   */
  text: string;
  /**
   * Sent as the user's message when chosen (default: text).
   * @maxLength 1000
   * @example "What about tomorrow?"
   */
  value?: string;
}

/** Quick replies (bots only). */
export interface SuggestionsPartDto {
  /** @example "suggestions" */
  type: 'suggestions';
  /**
   * @minItems 1
   * @maxItems 10
   * @example [{"text":"Tomorrow?"},{"text":"In Fahrenheit","value":"Show it in °F"}]
   */
  items: SuggestionDto[];
}

/**
 * One part of a message; `type` says which (docs/parts.md).
 * @example {"type":"file","url":"https://example.com/chart.png","mediaType":"image/png"}
 */
export type MessagePartDto = TextPartDto | ReasoningPartDto | ToolPartDto | SourcePartDto | FilePartDto | DataPartDto | SuggestionsPartDto;

export type PartDtosMatchProtocol = [
  Assert<Same<TextPartDto, TextPart>>,
  Assert<Same<ReasoningPartDto, ReasoningPart>>,
  Assert<Same<ToolStateDto, ToolState>>,
  Assert<Same<ToolApprovalDto, ToolApproval>>,
  Assert<Same<ToolPartDto, ToolPart>>,
  Assert<Same<SourcePartDto, SourcePart>>,
  Assert<Same<FilePartDto, FilePart>>,
  Assert<Same<DataPartDto, DataPart>>,
  Assert<Same<SuggestionDto, Suggestion>>,
  Assert<Same<SuggestionsPartDto, SuggestionsPart>>,
  Assert<Same<MessagePartDto, MessagePart>>,
];
