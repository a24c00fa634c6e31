import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ActivityStateSchema, MessageDataSchema as MessageData, RatingSchema } from './common.schema';
import { ACTIVITY_LABEL_MAX, FEEDBACK_COMMENT_MAX, HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT } from './names';
import { partError } from './part-checks';
import { APPROVAL_REASON_MAX } from './parts';
import { MessagePartSchema, PartPatchSchema, PartsSchema } from './parts.schema';
import type {
  ActivityUpdate,
  AgentDebug,
  AgentReply,
  ApprovalRequest,
  AuthRefresh,
  ClientMessage,
  FeedbackRequest,
  HistoryRequest,
  StopRequest,
  StreamDelta,
  StreamEnd,
  StreamPart,
  StreamStart,
  StreamUpdate,
} from './payloads';
import type { Assert, Same } from './type-checks';

/**
 * Validation schemas of the inbound payloads declared in `payloads.ts`. The `Same` checks below
 * fail the build if a schema and its wire type drift apart. Outbound payloads, acks and the
 * handshake have theirs in `outbound.schema.ts`, `ack.schema.ts` and `handshake.schema.ts`;
 * `protocol.registry.ts` ties them all to their events.
 */

export const ClientMessageSchema = Type.Object(
  {
    clientMessageId: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'Chosen by the client; a repeat within DEDUPE_WINDOW_S is not delivered twice.',
    }),
    text: Type.String({ description: 'At most MAX_MESSAGE_BYTES UTF-8 bytes, like the whole payload.' }),
    data: Type.Optional(MessageData),
    parts: Type.Optional(PartsSchema),
  },
  { title: 'ClientMessage' },
);

export const AgentReplySchema = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 256, description: "A clientId, or '*' for every client of the bot." }),
    text: Type.String({
      description:
        'At most MAX_MESSAGE_BYTES UTF-8 bytes, like the whole payload. With parts: empty, or the concatenation of the text parts.',
    }),
    data: Type.Optional(MessageData),
    parts: Type.Optional(PartsSchema),
    replyTo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The id of the message this one answers.' })),
  },
  { title: 'AgentReply' },
);

export const AgentDebugSchema = Type.Object(
  {
    clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Labels the conversation the trace belongs to.' })),
    trace: Type.Unknown({ description: 'Any JSON value.' }),
  },
  { title: 'AgentDebug' },
);

export const AuthRefreshSchema = Type.Object({ token: Type.String({ minLength: 1 }) }, { title: 'AuthRefresh' });

export const HistoryRequestSchema = Type.Object(
  {
    before: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'A message id; the page ends before it. Unset: the newest.' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: HISTORY_MAX_LIMIT, default: HISTORY_DEFAULT_LIMIT })),
  },
  { title: 'HistoryRequest' },
);

/** A message id as a peer sends it back: checked by length, looked up by the hub. */
const MessageIdRef = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

export const StreamStartSchema = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 256, description: "A clientId; '*' is refused (a stream goes to one user)." }),
    replyTo: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The id of the message this one answers.' })),
    data: Type.Optional(MessageData),
    parts: Type.Optional(PartsSchema),
  },
  { title: 'StreamStart' },
);

export const StreamDeltaSchema = Type.Object(
  {
    id: MessageIdRef('The id stream:start acked.'),
    text: Type.String({ minLength: 1, description: 'A piece to append; the accumulated content stays within STREAM_MAX_BYTES.' }),
    index: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "The part to append to (text, reasoning, or a tool call's raw input while input-streaming). Unset: the last part when it is text, else a new text part.",
      }),
    ),
  },
  { title: 'StreamDelta' },
);

export const StreamPartSchema = Type.Object(
  { id: MessageIdRef('The id stream:start acked.'), part: MessagePartSchema },
  { title: 'StreamPart', description: 'Appends a new part; the ack carries its index.' },
);

export const StreamUpdateSchema = Type.Object(
  {
    id: MessageIdRef('The id stream:start acked.'),
    index: Type.Integer({ minimum: 0, description: 'The part to change.' }),
    part: PartPatchSchema,
  },
  { title: 'StreamUpdate' },
);

export const StreamEndSchema = Type.Object(
  {
    id: MessageIdRef('The id stream:start acked.'),
    text: Type.Optional(Type.String({ description: 'When given, replaces the accumulated text (a bot may correct itself).' })),
    data: Type.Optional(MessageData),
    parts: Type.Optional(
      Type.Array(MessagePartSchema, { description: 'When given, replaces the accumulated parts (and the text, by their text parts).' }),
    ),
    status: Type.Optional(
      Type.Union([Type.Literal('complete'), Type.Literal('error'), Type.Literal('cancelled')], { description: 'Default complete.' }),
    ),
  },
  { title: 'StreamEnd' },
);

export const ActivityUpdateSchema = Type.Object(
  {
    to: Type.String({ minLength: 1, maxLength: 256, description: 'A clientId.' }),
    state: ActivityStateSchema,
    label: Type.Optional(Type.String({ maxLength: ACTIVITY_LABEL_MAX, description: 'What the bot is doing, for people.' })),
  },
  { title: 'ActivityUpdate' },
);

export const StopRequestSchema = Type.Union(
  [
    Type.Object({ id: MessageIdRef('A stream of this conversation.') }),
    Type.Object({ clientMessageId: Type.String({ minLength: 1, maxLength: 64, description: "The user's message the bot is answering." }) }),
  ],
  { title: 'StopRequest' },
);

export const FeedbackRequestSchema = Type.Object(
  {
    id: MessageIdRef("A bot message of the sender's conversation."),
    rating: Type.Union([RatingSchema, Type.Null()], { description: 'null withdraws an earlier rating.' }),
    comment: Type.Optional(Type.String({ maxLength: FEEDBACK_COMMENT_MAX })),
  },
  { title: 'FeedbackRequest' },
);

export const ApprovalRequestSchema = Type.Object(
  {
    messageId: MessageIdRef("The bot message of the sender's conversation whose tool call asks for approval."),
    approvalId: Type.String({ minLength: 1, maxLength: 128, description: "The tool part's approval.id." }),
    approved: Type.Boolean(),
    reason: Type.Optional(Type.String({ maxLength: APPROVAL_REASON_MAX })),
  },
  { title: 'ApprovalRequest' },
);

export type SchemasMatchProtocol = [
  Assert<Same<Static<typeof ClientMessageSchema>, Omit<ClientMessage, 'data'> & { data?: Static<typeof MessageData> }>>,
  Assert<Same<Static<typeof AgentReplySchema>, Omit<AgentReply, 'data'> & { data?: Static<typeof MessageData> }>>,
  Assert<Same<Static<typeof AgentDebugSchema>, AgentDebug>>,
  Assert<Same<Static<typeof AuthRefreshSchema>, AuthRefresh>>,
  Assert<Same<Static<typeof HistoryRequestSchema>, HistoryRequest>>,
  Assert<Same<Static<typeof StreamStartSchema>, Omit<StreamStart, 'data'> & { data?: Static<typeof MessageData> }>>,
  Assert<Same<Static<typeof StreamDeltaSchema>, StreamDelta>>,
  Assert<Same<Static<typeof StreamEndSchema>, Omit<StreamEnd, 'data'> & { data?: Static<typeof MessageData> }>>,
  Assert<Same<Static<typeof ActivityUpdateSchema>, ActivityUpdate>>,
  Assert<Same<Static<typeof StopRequestSchema>, StopRequest>>,
  Assert<Same<Static<typeof FeedbackRequestSchema>, FeedbackRequest>>,
  Assert<Same<Static<typeof StreamPartSchema>, StreamPart>>,
  Assert<Same<Static<typeof StreamUpdateSchema>, Omit<StreamUpdate, 'part'> & { part: Static<typeof PartPatchSchema> }>>,
  Assert<Same<Static<typeof ApprovalRequestSchema>, ApprovalRequest>>,
];

/** A compiled validator: `check(value)` narrows `value` to the schema's type; `explain` says why a value fails. */
export interface Validator<T> {
  (value: unknown): value is T;
  /** The first thing wrong with `value` (a part named by its index, type and field), for the error ack. */
  explain(value: unknown): string | undefined;
}

export function compile<T extends TSchema>(schema: T): Validator<Static<T>> {
  const checker = TypeCompiler.Compile(schema);
  const check = ((value: unknown): value is Static<T> => checker.Check(value)) as Validator<Static<T>>;
  check.explain = (value) => explainFailure(checker.Errors(value).First(), value);
  return check;
}

/**
 * A union of part schemas fails as "expected union value" at the part: the part is checked again
 * against its own type's schema, so the message names the field.
 */
function explainFailure(first: { path: string; message: string } | undefined, value: unknown): string | undefined {
  if (!first) return undefined;
  const partPath = /^\/(parts\/(\d+)|part)(\/|$)/.exec(first.path);
  if (partPath && value !== null && typeof value === 'object') {
    const parts = (value as { parts?: unknown[]; part?: unknown }).parts;
    const part = partPath[2] === undefined ? (value as { part?: unknown }).part : parts?.[Number(partPath[2])];
    const where = partPath[2] === undefined ? 'part' : `parts[${partPath[2]}]`;
    const error = partError(part, where);
    if (error) return error;
  }
  return `${first.path.slice(1).replaceAll('/', '.') || 'payload'}: ${first.message}`;
}

export const isClientMessage = compile(ClientMessageSchema);
export const isAgentReply = compile(AgentReplySchema);
export const isAgentDebug = compile(AgentDebugSchema);
export const isAuthRefresh = compile(AuthRefreshSchema);
export const isHistoryRequest = compile(HistoryRequestSchema);
export const isStreamStart = compile(StreamStartSchema);
export const isStreamDelta = compile(StreamDeltaSchema);
export const isStreamEnd = compile(StreamEndSchema);
export const isActivityUpdate = compile(ActivityUpdateSchema);
export const isStopRequest = compile(StopRequestSchema);
export const isFeedbackRequest = compile(FeedbackRequestSchema);
export const isStreamPart = compile(StreamPartSchema);
export const isStreamUpdate = compile(StreamUpdateSchema);
export const isApprovalRequest = compile(ApprovalRequestSchema);
