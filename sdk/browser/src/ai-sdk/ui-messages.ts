import type { ClientInboundMessage, MessagePart, ToolPart } from '../../../../src/protocol';
import { partsOf } from './ui-chunks';

type ToolFields = { type: 'dynamic-tool'; toolName: string; toolCallId: string; title?: string };
type Approval = { id: string; approved?: boolean; reason?: string };

/** A tool call as the AI SDK's `DynamicToolUIPart`: the browser does not know the bot's tool schemas. */
export type RelayToolUIPart = ToolFields &
  (
    | { state: 'input-streaming'; input?: unknown }
    | { state: 'input-available'; input: unknown }
    | { state: 'approval-requested'; input: unknown; approval: { id: string } }
    | { state: 'approval-responded'; input: unknown; approval: { id: string; approved: boolean; reason?: string } }
    | { state: 'output-available'; input: unknown; output: unknown; approval?: { id: string; approved: true; reason?: string } }
    | { state: 'output-error'; input: unknown; errorText: string; approval?: { id: string; approved: true; reason?: string } }
    | { state: 'output-denied'; input: unknown; approval: { id: string; approved: false; reason?: string } }
  );

/** A part of a {@link RelayUIMessage}: the AI SDK's `UIMessagePart` for each hub part type. */
export type RelayUIPart =
  | { type: 'text'; text: string; state?: 'done' }
  | { type: 'reasoning'; text: string; state?: 'done' }
  | RelayToolUIPart
  | { type: 'source-url'; sourceId: string; url: string; title?: string }
  | { type: 'source-document'; sourceId: string; mediaType: string; title: string; filename?: string }
  | { type: 'file'; url: string; mediaType: string; filename?: string }
  | { type: `data-${string}`; id?: string; data: unknown };

/** A hub message as the AI SDK's `UIMessage` (assignable to it). */
export interface RelayUIMessage {
  id: string;
  role: 'user' | 'assistant';
  parts: RelayUIPart[];
}

/** A message of the conversation log as the AI SDK's `UIMessage`: the user's as `user`, the bot's as `assistant`. */
export function toUIMessage(message: ClientInboundMessage): RelayUIMessage {
  return { id: message.id, role: message.author === 'user' ? 'user' : 'assistant', parts: partsOf(message).map(toUIPart) };
}

/** One hub part as the AI SDK's part; `index` names a data part that has no id. */
export function toUIPart(part: MessagePart, index: number): RelayUIPart {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return { type: part.type, text: part.text, state: 'done' };
    case 'tool':
      return toolPart(part);
    case 'source':
      if (part.url !== undefined) return { type: 'source-url', sourceId: part.sourceId, url: part.url, ...optional({ title: part.title }) };
      return {
        type: 'source-document',
        sourceId: part.sourceId,
        mediaType: part.mediaType ?? 'text/plain',
        title: part.title ?? part.filename ?? part.sourceId,
        ...optional({ filename: part.filename }),
      };
    case 'file':
      return { type: 'file', url: part.url, mediaType: part.mediaType, ...optional({ filename: part.filename }) };
    case 'data':
      return { type: `data-${part.name}`, id: part.id ?? String(index), data: part.data };
    case 'suggestions':
      return { type: 'data-suggestions', id: String(index), data: part.items };
  }
}

function toolPart(part: ToolPart): RelayToolUIPart {
  const fields: ToolFields = {
    type: 'dynamic-tool',
    toolName: part.toolName,
    toolCallId: part.toolCallId,
    ...optional({ title: part.title }),
  };
  const input = part.input ?? {};
  const approval: Approval | undefined = part.approval;
  switch (part.state) {
    case 'input-streaming':
      return { ...fields, state: 'input-streaming', ...optional({ input: part.input }) };
    case 'input-available':
      return { ...fields, state: 'input-available', input };
    case 'approval-requested':
      return { ...fields, state: 'approval-requested', input, approval: { id: approval?.id ?? '' } };
    case 'approval-responded':
      return {
        ...fields,
        state: 'approval-responded',
        input,
        approval: { id: approval?.id ?? '', approved: approval?.approved === true, ...optional({ reason: approval?.reason }) },
      };
    case 'output-available':
      return { ...fields, state: 'output-available', input, output: part.output, ...granted(approval) };
    case 'output-error':
      return { ...fields, state: 'output-error', input, errorText: part.errorText ?? 'the tool failed', ...granted(approval) };
    case 'output-denied':
      return {
        ...fields,
        state: 'output-denied',
        input,
        approval: { id: approval?.id ?? '', approved: false, ...optional({ reason: approval?.reason }) },
      };
  }
}

function granted(approval: Approval | undefined): { approval?: { id: string; approved: true; reason?: string } } {
  return approval?.approved === true ? { approval: { id: approval.id, approved: true, ...optional({ reason: approval.reason }) } } : {};
}

/** `fields` without its undefined entries (the AI SDK's types are exact about optional fields). */
function optional<T extends Record<string, unknown>>(fields: T): Partial<T> {
  const out: Partial<T> = {};
  for (const key of Object.keys(fields) as Array<keyof T>) if (fields[key] !== undefined) out[key] = fields[key];
  return out;
}
