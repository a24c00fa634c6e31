/**
 * A message's parts (docs/parts.md): their types, bounds and how a stream's changes apply to them.
 * The types come from the schemas in `parts.schema.ts` (imported as types only), so this file has
 * no runtime dependencies and the browser SDK can use it to hold a streamed message as the hub does.
 */
import type { Static } from '@sinclair/typebox';
import type {
  DataPartSchema,
  FilePartSchema,
  MessagePartSchema,
  ReasoningPartSchema,
  SourcePartSchema,
  SuggestionSchema,
  SuggestionsPartSchema,
  TextPartSchema,
  ToolApprovalSchema,
  ToolPartSchema,
} from './parts.schema';

/** A tool call's states, in the order they move (the three `output-*` states all end it). */
export const TOOL_STATES = [
  'input-streaming',
  'input-available',
  'approval-requested',
  'approval-responded',
  'output-available',
  'output-error',
  'output-denied',
] as const;
export type ToolState = (typeof TOOL_STATES)[number];

/** Longest `reason` of an approval decision, in characters. */
export const APPROVAL_REASON_MAX = 1000;
/** Most items of a `suggestions` part, and the longest item text. */
export const SUGGESTIONS_MAX = 10;
export const SUGGESTION_TEXT_MAX = 200;
/** `name` of a `data` part. */
export const DATA_PART_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** The part types a user message may carry; the rest are the bot's. */
export const USER_PART_TYPES: readonly MessagePart['type'][] = ['text', 'file', 'data'];

export type TextPart = Static<typeof TextPartSchema>;
export type ReasoningPart = Static<typeof ReasoningPartSchema>;
export type ToolApproval = Static<typeof ToolApprovalSchema>;
export type ToolPart = Static<typeof ToolPartSchema>;
export type SourcePart = Static<typeof SourcePartSchema>;
export type FilePart = Static<typeof FilePartSchema>;
export type DataPart = Static<typeof DataPartSchema>;
export type Suggestion = Static<typeof SuggestionSchema>;
export type SuggestionsPart = Static<typeof SuggestionsPartSchema>;
/** One part of a message; `type` says which. */
export type MessagePart = Static<typeof MessagePartSchema>;
/** Fields `stream:update` merges into a part (never its `type`). */
export type PartPatch = Record<string, unknown>;

/** One change to an open stream's parts; every change is one `seq`. */
export type PartChange =
  /** Appends `text` to part `index`; `index` equal to the number of parts opens a new text part. */
  | { kind: 'delta'; index: number; text: string }
  /** Appends a new part. */
  | { kind: 'part'; part: MessagePart }
  /** Merges `patch` into part `index`. */
  | { kind: 'update'; index: number; patch: PartPatch };

/** A message's text: the concatenation of its text parts. */
export function textOfParts(parts: readonly MessagePart[]): string {
  let text = '';
  for (const part of parts) if (part.type === 'text') text += part.text;
  return text;
}

/** Where a delta without `index` goes: the last part when it is text, else a new text part. */
export function defaultDeltaIndex(parts: readonly MessagePart[]): number {
  const last = parts[parts.length - 1];
  return last?.type === 'text' ? parts.length - 1 : parts.length;
}

/** Whether part `part` takes deltas: text and reasoning, and a tool call's raw input while it streams. */
export function takesDeltas(part: MessagePart): boolean {
  return part.type === 'text' || part.type === 'reasoning' || (part.type === 'tool' && part.state === 'input-streaming');
}

/** How far a tool state is along; the `output-*` states share the last rank. */
export function toolStateRank(state: ToolState): number {
  return Math.min(TOOL_STATES.indexOf(state), 4);
}

/**
 * Applies one change to `parts` in place and returns the part it touched (a new one for a delta
 * that opens a text part). The caller has checked it ({@link partChangeError} on the hub).
 */
export function applyPartChange(parts: MessagePart[], change: PartChange): { index: number; part: MessagePart } {
  if (change.kind === 'part') {
    parts.push(change.part);
    return { index: parts.length - 1, part: change.part };
  }
  const { index } = change;
  if (change.kind === 'update') {
    const part = { ...parts[index], ...change.patch, type: parts[index].type } as MessagePart;
    parts[index] = part;
    return { index, part };
  }
  const held = parts[index];
  let part: MessagePart;
  if (held === undefined) part = { type: 'text', text: change.text };
  else if (held.type === 'tool') part = { ...held, inputText: (held.inputText ?? '') + change.text };
  else part = { ...held, text: (held as TextPart | ReasoningPart).text + change.text } as MessagePart;
  parts[index] = part;
  return { index, part };
}
