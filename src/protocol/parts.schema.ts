import { Type, type Static } from '@sinclair/typebox';
import { APPROVAL_REASON_MAX, DATA_PART_NAME_PATTERN, SUGGESTION_TEXT_MAX, SUGGESTIONS_MAX, type TOOL_STATES } from './parts';
import type { Assert, Same } from './type-checks';

/**
 * A message's content, defined once (docs/parts.md): the part types a bot message (reply, REST
 * publish, stream) and a user message may carry, with their bounds. Payloads, acks, history pages,
 * the AsyncAPI document, the REST DTOs (by a compile-time check) and the Python SDK's types all
 * come from these schemas; `parts.ts` derives the TypeScript types from them.
 *
 * Adding a part type: its schema here, its entry in {@link PartSchemas}, and (when it accumulates
 * text from deltas) a line in `parts.ts`.
 */

/** An absolute http: or https: URL (never javascript:, data: or relative). */
export const HttpUrlSchema = Type.String({
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$',
  maxLength: 2048,
  description: 'An absolute http: or https: URL.',
  examples: ['https://example.com/report.pdf'],
});

/** Any JSON value (nesting and size bounded with the message, MAX_MESSAGE_BYTES). */
const Json = (description: string) => Type.Unknown({ description });

/** An identifier a bot chooses (tool call id, source id, approval id). */
const PartId = (description: string, example: string) => Type.String({ minLength: 1, maxLength: 128, description, examples: [example] });

export const TextPartSchema = Type.Object(
  { type: Type.Literal('text'), text: Type.String({ description: 'Markdown.' }) },
  {
    title: 'TextPart',
    description: "The answer; a message's text is the concatenation of its text parts.",
    examples: [{ type: 'text', text: 'It is **sunny**.' }],
  },
);

export const ReasoningPartSchema = Type.Object(
  { type: Type.Literal('reasoning'), text: Type.String({ description: "The bot's reasoning, shown collapsed." }) },
  { title: 'ReasoningPart', examples: [{ type: 'reasoning', text: 'The user asks about the weather; call the forecast tool.' }] },
);

export const ToolStateSchema = Type.Union(
  [
    Type.Literal('input-streaming'),
    Type.Literal('input-available'),
    Type.Literal('approval-requested'),
    Type.Literal('approval-responded'),
    Type.Literal('output-available'),
    Type.Literal('output-error'),
    Type.Literal('output-denied'),
  ],
  {
    title: 'ToolState',
    description:
      'Moves only forward: input-streaming → input-available → approval-requested → approval-responded → output-available | output-error | output-denied. Only a user decision moves a tool to approval-responded.',
  },
);

export const ToolApprovalSchema = Type.Object(
  {
    id: PartId('The approval id a user decides on (C→H approval approvalId).', 'appr_1'),
    approved: Type.Optional(Type.Boolean({ description: 'Set by the hub from the recorded decision.' })),
    reason: Type.Optional(Type.String({ maxLength: APPROVAL_REASON_MAX })),
    decidedBy: Type.Optional(Type.String({ description: 'The clientId that decided.' })),
    // No `format`: parts are validated by the hub, which registers no formats; the hub sets it, an ISO 8601 UTC time.
    ts: Type.Optional(Type.String({ description: 'When the user decided (ISO 8601 UTC).' })),
  },
  { title: 'ToolApproval', description: "A request for approval; the decision fields are the hub's." },
);

export const ToolPartSchema = Type.Object(
  {
    type: Type.Literal('tool'),
    toolCallId: PartId('Unique within the message.', 'call_1'),
    toolName: Type.String({ minLength: 1, maxLength: 128, examples: ['get_weather'] }),
    state: ToolStateSchema,
    input: Type.Optional(Json("The call's input, once available.")),
    inputText: Type.Optional(
      Type.String({
        description: "The raw input JSON as it streams (input-streaming): stream:delta with this part's index appends to it.",
      }),
    ),
    output: Type.Optional(Json("The call's output (output-available).")),
    errorText: Type.Optional(Type.String({ maxLength: 4096, description: 'Why the call failed (output-error).' })),
    title: Type.Optional(Type.String({ maxLength: 256 })),
    approval: Type.Optional(ToolApprovalSchema),
  },
  {
    title: 'ToolPart',
    description: 'A tool call, as a step with its state.',
    examples: [
      { type: 'tool', toolCallId: 'call_1', toolName: 'get_weather', state: 'input-streaming', inputText: '{"city":"Par' },
      {
        type: 'tool',
        toolCallId: 'call_2',
        toolName: 'send_email',
        state: 'approval-requested',
        input: { to: 'ana@example.com' },
        approval: { id: 'appr_1' },
      },
    ],
  },
);

export const SourcePartSchema = Type.Object(
  {
    type: Type.Literal('source'),
    sourceId: PartId('Numbered citations refer to it.', 'src_1'),
    url: Type.Optional(HttpUrlSchema),
    title: Type.Optional(Type.String({ maxLength: 512 })),
    mediaType: Type.Optional(Type.String({ maxLength: 128 })),
    filename: Type.Optional(Type.String({ maxLength: 256 })),
  },
  {
    title: 'SourcePart',
    description: 'A citation.',
    examples: [{ type: 'source', sourceId: 'src_1', url: 'https://en.wikipedia.org/wiki/Paris', title: 'Paris' }],
  },
);

export const FilePartSchema = Type.Object(
  {
    type: Type.Literal('file'),
    url: HttpUrlSchema,
    mediaType: Type.String({ minLength: 1, maxLength: 128, examples: ['image/png'] }),
    filename: Type.Optional(Type.String({ maxLength: 256 })),
    size: Type.Optional(Type.Integer({ minimum: 0, description: 'Bytes.' })),
  },
  {
    title: 'FilePart',
    description: 'A file by URL: an image preview or a file card.',
    examples: [{ type: 'file', url: 'https://example.com/chart.png', mediaType: 'image/png', filename: 'chart.png', size: 48213 }],
  },
);

export const DataPartSchema = Type.Object(
  {
    type: Type.Literal('data'),
    name: Type.String({ pattern: DATA_PART_NAME_PATTERN.source, description: "1–64 chars of [A-Za-z0-9_-]: the integrator's renderer." }),
    id: Type.Optional(PartId('Lets a later part or update refer to this one.', 'd1')),
    data: Json('Any JSON value.'),
  },
  {
    title: 'DataPart',
    description: "Structured data for an integrator's renderer.",
    examples: [{ type: 'data', name: 'weather-card', data: { tempC: 21 } }],
  },
);

export const SuggestionSchema = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: SUGGESTION_TEXT_MAX, description: 'What the button says.' }),
    value: Type.Optional(Type.String({ maxLength: 1000, description: "What is sent as the user's message when chosen (default: text)." })),
  },
  { title: 'Suggestion' },
);

export const SuggestionsPartSchema = Type.Object(
  { type: Type.Literal('suggestions'), items: Type.Array(SuggestionSchema, { minItems: 1, maxItems: SUGGESTIONS_MAX }) },
  {
    title: 'SuggestionsPart',
    description: "Quick replies (bots only); choosing one sends it as the user's message.",
    examples: [{ type: 'suggestions', items: [{ text: 'Tomorrow?' }, { text: 'In Fahrenheit', value: 'Show it in °F' }] }],
  },
);

/** Every part type's schema, by `type`: the table validation, docs and the REST DTO check walk. */
export const PartSchemas = {
  text: TextPartSchema,
  reasoning: ReasoningPartSchema,
  tool: ToolPartSchema,
  source: SourcePartSchema,
  file: FilePartSchema,
  data: DataPartSchema,
  suggestions: SuggestionsPartSchema,
} as const;

export const MessagePartSchema = Type.Union(
  [TextPartSchema, ReasoningPartSchema, ToolPartSchema, SourcePartSchema, FilePartSchema, DataPartSchema, SuggestionsPartSchema],
  { title: 'MessagePart', description: 'One part of a message; `type` says which.' },
);

/** `parts` of a message: at most MESSAGE_MAX_PARTS (checked by the hub: a setting, not a schema bound). */
export const PartsSchema = Type.Array(MessagePartSchema, {
  description: 'The message in parts, in order (docs/parts.md); at most MESSAGE_MAX_PARTS. Absent on a message without parts.',
});

/** What `stream:update` may merge into a part: any of its fields but `type` (checked against the part's type by the hub). */
export const PartPatchSchema = Type.Object(
  {},
  {
    additionalProperties: true,
    title: 'PartPatch',
    description: 'Fields to merge into the part at index; its type never changes, a tool state only moves forward.',
    examples: [{ state: 'input-available', input: { city: 'Paris' } }],
  },
);

/** The part types as a list, with the schema union kept in step with {@link PartSchemas} and the tool states. */
export type PartSchemasMatch = [
  Assert<Same<Static<typeof MessagePartSchema>, Static<(typeof PartSchemas)[keyof typeof PartSchemas]>>>,
  Assert<Same<Static<typeof ToolStateSchema>, (typeof TOOL_STATES)[number]>>,
];
