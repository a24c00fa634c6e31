/**
 * The chunks of the Vercel AI SDK's UI message stream (`streamText(…).toUIMessageStream()` on a
 * bot, what a `ChatTransport` hands to `useChat` in a browser), as the AI SDK 7 defines its
 * `UIMessageChunk`: the fields the hub's part codec reads or writes, so neither SDK of this
 * repository depends on the `ai` package. A compile-time test (test/unit/ui-message-chunk.test.ts)
 * checks both directions against the pinned `ai`: every AI SDK chunk is one of these, and every one
 * of these is an AI SDK chunk. The mapping to message parts is in docs/ai-sdk.md.
 */
export type UIMessageChunk =
  | { type: 'text-start'; id: string; providerMetadata?: ProviderMetadata }
  | { type: 'text-delta'; id: string; delta: string; providerMetadata?: ProviderMetadata }
  | { type: 'text-end'; id: string; providerMetadata?: ProviderMetadata }
  | { type: 'reasoning-start'; id: string; providerMetadata?: ProviderMetadata }
  | { type: 'reasoning-delta'; id: string; delta: string; providerMetadata?: ProviderMetadata }
  | { type: 'reasoning-end'; id: string; providerMetadata?: ProviderMetadata }
  | { type: 'custom'; kind: `${string}.${string}`; providerMetadata?: ProviderMetadata }
  | { type: 'error'; errorText: string }
  | ({ type: 'tool-input-start'; inputEncoding?: 'json' | 'text' } & ToolCallFields)
  | { type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string }
  | ({ type: 'tool-input-available'; input: unknown } & ToolCallFields)
  | ({ type: 'tool-input-error'; input: unknown; errorText: string } & ToolCallFields)
  | {
      type: 'tool-approval-request';
      approvalId: string;
      toolCallId: string;
      approvalDescriptor?: unknown;
      inputSchemaInput?: unknown;
      reason?: string;
      isAutomatic?: boolean;
      signature?: string;
    }
  | {
      type: 'tool-approval-response';
      approvalId: string;
      approved: boolean;
      reason?: string;
      providerExecuted?: boolean;
      providerMetadata?: ProviderMetadata;
    }
  | ({ type: 'tool-output-available'; output: unknown; preliminary?: boolean } & ToolResultFields)
  | ({ type: 'tool-output-error'; errorText: string } & ToolResultFields)
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'source-url'; sourceId: string; url: string; title?: string; providerMetadata?: ProviderMetadata }
  | {
      type: 'source-document';
      sourceId: string;
      mediaType: string;
      title: string;
      filename?: string;
      providerMetadata?: ProviderMetadata;
    }
  | { type: 'file'; url: string; mediaType: string; providerMetadata?: ProviderMetadata }
  | { type: 'reasoning-file'; url: string; mediaType: string; providerMetadata?: ProviderMetadata }
  | { type: `data-${string}`; id?: string; data: unknown; transient?: boolean }
  | {
      type: 'steering-message';
      id: string;
      parts: Array<{ type: 'text'; text: string } | { type: 'file'; mediaType: string; url: string; filename?: string }>;
    }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'reset-step' }
  | { type: 'start'; messageId?: string; messageMetadata?: unknown }
  | { type: 'finish'; finishReason?: UIFinishReason; messageMetadata?: unknown }
  | { type: 'abort'; reason?: string }
  | { type: 'message-metadata'; messageMetadata: unknown };

/** Provider-specific fields the AI SDK passes through; the hub keeps none of them. */
export type ProviderMetadata = Record<string, JSONObject>;

/** A JSON value, as the AI SDK types it. */
export type JSONValue = null | string | number | boolean | Readonly<JSONObject> | readonly JSONValue[];
export type JSONObject = { [key: string]: JSONValue | undefined };

/** Why the model stopped (the AI SDK's `FinishReason`). */
export type UIFinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'interrupted' | 'other';

interface ToolCallFields {
  toolCallId: string;
  toolName: string;
  providerExecuted?: boolean;
  providerMetadata?: ProviderMetadata;
  toolMetadata?: JSONObject;
  dynamic?: boolean;
  title?: string;
}

interface ToolResultFields {
  toolCallId: string;
  providerExecuted?: boolean;
  providerMetadata?: ProviderMetadata;
  toolMetadata?: JSONObject;
  dynamic?: boolean;
}

/** The chunk of one `type`. */
export type UIMessageChunkOf<T extends UIMessageChunk['type']> = Extract<UIMessageChunk, { type: T }>;
