import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { jsonBytes, MAX_JSON_DEPTH, nestsDeeperThan, payloadError } from './payload-limits';
import { plainOrParts } from './messages';
import type { MessageContent, MessageData } from './payloads';
import { PartSchemas } from './parts.schema';
import {
  defaultDeltaIndex,
  takesDeltas,
  textOfParts,
  toolStateRank,
  USER_PART_TYPES,
  type MessagePart,
  type PartChange,
  type PartPatch,
  type ToolPart,
} from './parts';

/**
 * Server-side checks of parts (docs/parts.md, "Bounds"): each part against its type's schema, the
 * part count, who may send which type, and the changes a stream may make. Every refusal names the
 * part and the field, so a bot author sees what to fix; a refused part changes nothing.
 */

const checkers = Object.fromEntries(
  Object.entries(PartSchemas).map(([type, schema]) => [type, TypeCompiler.Compile(schema as TSchema)]),
) as Record<string, TypeCheck<TSchema>>;

/** Why `part` (at `where`, e.g. `parts[2]`) is not a valid part, or null. */
export function partError(part: unknown, where: string): string | null {
  if (part === null || typeof part !== 'object' || Array.isArray(part)) return `${where}: not an object`;
  const type = (part as { type?: unknown }).type;
  if (typeof type !== 'string' || !Object.hasOwn(checkers, type))
    return `${where}: unknown part type ${JSON.stringify(type) ?? 'undefined'}`;
  const checker = checkers[type];
  if (nestsDeeperThan(part, MAX_JSON_DEPTH)) return `${where} (${type}): nests deeper than ${MAX_JSON_DEPTH}`;
  const first = checker.Errors(part).First();
  if (first) return `${where} (${type})${first.path.replaceAll('/', '.')}: ${first.message}`;
  return null;
}

/** Who sends a message: a bot may send every part type, a user only text, file and data. */
export type PartAuthor = 'agent' | 'user';

/**
 * Why `parts` of a message may not be sent, or null: more than `maxParts`, a part that fails its
 * schema, a type the author may not send, or a tool call in a state only the hub sets.
 */
export function partsError(parts: unknown, maxParts: number, author: PartAuthor): string | null {
  if (!Array.isArray(parts)) return 'parts: not an array';
  if (parts.length > maxParts) return `parts: more than MESSAGE_MAX_PARTS (${maxParts})`;
  for (let i = 0; i < parts.length; i++) {
    const error = partError(parts[i], `parts[${i}]`);
    if (error) return error;
    const part = parts[i] as MessagePart;
    if (author === 'user' && !USER_PART_TYPES.includes(part.type)) return `parts[${i}]: a user message may not carry ${part.type} parts`;
    if (part.type === 'tool') {
      const tool = toolError(part, `parts[${i}]`);
      if (tool) return tool;
    }
  }
  return null;
}

/** A bot's tool part: the approval's decision is the hub's to set, and a requested approval needs an id. */
function toolError(part: ToolPart, where: string): string | null {
  if (part.state === 'approval-responded') return `${where} (tool).state: only a user's decision moves a tool call to approval-responded`;
  const { approval } = part;
  if (approval && (approval.approved !== undefined || approval.decidedBy !== undefined || approval.ts !== undefined)) {
    return `${where} (tool).approval: approved, decidedBy and ts are set by the hub from the user's decision`;
  }
  if (part.state === 'approval-requested' && approval === undefined)
    return `${where} (tool).approval: approval-requested needs approval.id`;
  return null;
}

/**
 * A message's text and parts as the hub keeps them: `text` is the concatenation of the text parts.
 * A payload whose parts hold no text part and whose `text` is not empty gets that text as a first
 * text part; one whose text parts disagree with a non-empty `text` is refused (a string).
 */
export function contentOf(text: string, parts: readonly MessagePart[] | undefined): { text: string; parts?: MessagePart[] } | string {
  if (parts === undefined) return { text };
  const joined = textOfParts(parts);
  if (parts.some((p) => p.type === 'text')) {
    if (text !== '' && text !== joined) return 'text: must be the concatenation of the text parts (or empty)';
    return { text: joined, parts: [...parts] };
  }
  return text === '' ? { text, parts: [...parts] } : { text, parts: [{ type: 'text', text }, ...parts] };
}

/**
 * Why a stream may not make `change` to `parts` (the parts it holds), or null. A new part and the
 * part an update makes are checked against their schema; a delta goes to a part that takes deltas;
 * an update keeps the part's type and moves a tool's state only forward.
 */
export function partChangeError(parts: readonly MessagePart[], change: PartChange, maxParts: number): string | null {
  if (change.kind === 'part') {
    if (parts.length >= maxParts) return `parts: more than MESSAGE_MAX_PARTS (${maxParts})`;
    return partsError([change.part], 1, 'agent')?.replace('parts[0]', `part (index ${parts.length})`) ?? null;
  }
  const { index } = change;
  if (change.kind === 'delta') {
    if (index === parts.length && index === defaultDeltaIndex(parts)) {
      return parts.length >= maxParts ? `parts: more than MESSAGE_MAX_PARTS (${maxParts})` : null;
    }
    const held = parts[index];
    if (held === undefined) return `index: no part ${index} (the stream holds ${parts.length})`;
    return takesDeltas(held) ? null : `index: part ${index} (${held.type}) takes no deltas`;
  }
  const held = parts[index];
  if (held === undefined) return `index: no part ${index} (the stream holds ${parts.length})`;
  return patchError(held, change.patch, index);
}

function patchError(held: MessagePart, patch: PartPatch, index: number): string | null {
  const where = `part (index ${index})`;
  if (patch.type !== undefined && patch.type !== held.type) return `${where}.type: a part's type never changes (${held.type})`;
  const merged = { ...held, ...patch, type: held.type } as MessagePart;
  const error = partError(merged, where);
  if (error) return error;
  if (held.type !== 'tool') return null;
  const tool = merged as ToolPart;
  if (patch.state === 'approval-responded' && held.state !== 'approval-responded') {
    return `${where} (tool).state: only a user's decision moves a tool call to approval-responded`;
  }
  if (patch.approval !== undefined) {
    if (held.approval?.approved !== undefined) return `${where} (tool).approval: already decided by the user`;
    if (held.state === 'approval-requested') return `${where} (tool).approval: asked already; the user's decision comes as approval`;
    const approval = patch.approval as Record<string, unknown>;
    if (approval.approved !== undefined || approval.decidedBy !== undefined || approval.ts !== undefined) {
      return `${where} (tool).approval: approved, decidedBy and ts are set by the hub from the user's decision`;
    }
  }
  if (tool.state === 'approval-requested' && tool.approval === undefined)
    return `${where} (tool).approval: approval-requested needs approval.id`;
  if (tool.state !== held.state && toolStateRank(tool.state) <= toolStateRank(held.state)) {
    return `${where} (tool).state: ${held.state} cannot move to ${tool.state}`;
  }
  return null;
}

/** A message's content as given, and the bounds it must keep. */
export interface ContentLimits {
  maxBytes: number;
  maxParts: number;
}

/** Why a message's content was refused: the ack code, and what to fix. */
export interface ContentRefusal {
  code: 'INVALID_PAYLOAD' | 'PAYLOAD_TOO_LARGE';
  message?: string;
}

/**
 * Checks a message's content (text, data, parts) against the bounds of docs/parts.md and returns
 * it as the hub keeps it (text the concatenation of the text parts, parts absent on plain text),
 * or why it is refused. Bytes: the parts' JSON (which holds the text) or the text, plus the data.
 */
export function checkContent(
  given: { text: string; data?: MessageData; parts?: MessagePart[] },
  limits: ContentLimits,
  author: PartAuthor,
): { content: MessageContent } | ContentRefusal {
  const { data } = given;
  if (given.parts !== undefined) {
    const invalid = partsError(given.parts, limits.maxParts, author);
    if (invalid) return { code: 'INVALID_PAYLOAD', message: invalid };
  }
  const content = contentOf(given.text, given.parts);
  if (typeof content === 'string') return { code: 'INVALID_PAYLOAD', message: content };
  const tooLarge = payloadError(content.parts ? '' : content.text, data, limits.maxBytes);
  if (tooLarge) return { code: tooLarge };
  if (content.parts) {
    const bytes = jsonBytes(content.parts) + (data === undefined ? 0 : jsonBytes(data));
    if (bytes > limits.maxBytes) return { code: 'PAYLOAD_TOO_LARGE' };
  }
  const out: MessageContent = { text: content.text };
  if (data !== undefined) out.data = data;
  const parts = plainOrParts(content.parts);
  if (parts) out.parts = parts;
  return { content: out };
}
