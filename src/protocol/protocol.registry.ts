import type { TSchema } from '@sinclair/typebox';
import {
  ActivityAckSchema,
  ApprovalAckSchema,
  RuntimeApprovalAckSchema,
  StreamPartAckSchema,
  StreamUpdateAckSchema,
  DebugAckSchema,
  FeedbackAckSchema,
  StopAckSchema,
  StreamEndAckSchema,
  StreamStartAckSchema,
  HistoryAckSchema,
  RefreshAckSchema,
  RuntimeAckSchema,
  SendAckSchema,
  StreamDeltaAckSchema,
} from './ack.schema';
import type { AckCode, HandshakeCode, SessionClosedCode } from './codes';
import { AgentAuthSchema, ClientAuthSchema, HandshakeErrorDataSchema } from './handshake.schema';
import { Events, Namespaces } from './names';
import {
  AgentActivitySchema,
  AgentApprovalSchema,
  AgentFeedbackSchema,
  MessagePartEventSchema,
  AgentInboundMessageSchema,
  AgentStatusSchema,
  AgentStopSchema,
  MessageDeltaSchema,
  MessageEndSchema,
  MessageStartSchema,
  AuthExpiringSchema,
  ClientInboundMessageSchema,
  DebugTraceSchema,
  SessionClosedSchema,
  SessionInfoSchema,
} from './outbound.schema';
import type {
  AgentToHubEvents,
  ClientToHubEvents,
  HubToAgentEvents,
  HubToClientEvents,
  HubToOperatorEvents,
  OperatorToHubEvents,
} from './event-maps';
import {
  ClientConversationControlSchema,
  ConversationControlSchema,
  HandoffAckSchema,
  HandoffRequestSchema,
  OperatorAuthSchema,
  OperatorFeedMessageSchema,
  OperatorSessionSchema,
  WatchAckSchema,
  WatchRequestSchema,
  OperatorApprovalRequestSchema,
} from './handoff.schema';
import {
  ActivityUpdateSchema,
  AgentDebugSchema,
  AgentReplySchema,
  ApprovalRequestSchema,
  AuthRefreshSchema,
  ClientMessageSchema,
  FeedbackRequestSchema,
  HistoryRequestSchema,
  StopRequestSchema,
  StreamDeltaSchema,
  StreamEndSchema,
  StreamPartSchema,
  StreamStartSchema,
  StreamUpdateSchema,
} from './schemas';

/**
 * The relay protocol as data: for each namespace its handshake and every event in each direction
 * with the schema of its payload and of its ack. The AsyncAPI document is generated from this, and
 * the validators the hub runs use the same schemas. Adding an event is adding one entry here (after
 * its name in `names.ts`, its type in `payloads.ts`, its line in `event-maps.ts` and its schema):
 * the `satisfies` clauses fail the build when an entry is missing, extra, or has a schema of another
 * type than the event map.
 */

/** One event as the generator and tests walk it. */
export interface EventSpec {
  /** One line for people. */
  summary: string;
  payload: TSchema;
  /** The ack the receiver answers with, when the event takes one. */
  ack?: TSchema;
  /** The codes of a catalogue this event can carry, when it carries one (`session:closed`). */
  codes?: readonly (HandshakeCode | AckCode | SessionClosedCode)[];
}

/** What the events of a Socket.IO event map carry: the payload, and the ack when there is one. */
type Args<F> = F extends (...args: infer A) => void ? A : never;
type AckOf<F> = Args<F> extends [unknown, (res: infer R) => void] ? R : never;

/** A schema whose static type is `T`. */
type SchemaOf<T> = TSchema & { static: T };

/** An event entry whose schemas have the types of its event map; `ack` exactly when the map has one. */
type TypedEventSpec<F> = Omit<EventSpec, 'payload' | 'ack'> & { payload: SchemaOf<Args<F>[0]> } & ([AckOf<F>] extends [never]
    ? { ack?: undefined }
    : { ack: SchemaOf<AckOf<F>> });

/** Every event of an event map, by name. */
type Direction<Map> = { [E in keyof Map]: TypedEventSpec<Map[E]> };

/** The untyped view the generator and tests walk. */
export interface NamespaceSpec {
  /** The Socket.IO namespace. */
  path: string;
  title: string;
  description: string;
  /** Who connects here: the peer on the other side of the hub. */
  peer: string;
  /** The handshake `auth` object. */
  auth: TSchema;
  /** `err.data` of a refused handshake, and the codes this namespace refuses with. */
  refusal: TSchema;
  refusalCodes: readonly HandshakeCode[];
  /** Events the hub receives from the peer (C→H, A→H). */
  receive: Readonly<Record<string, EventSpec>>;
  /** Events the hub sends to the peer (H→C, H→A). */
  send: Readonly<Record<string, EventSpec>>;
}

const client = {
  path: Namespaces.client,
  title: 'Browser chat clients',
  description: 'One socket per browser tab, for one user (JWT sub) and one bot (agentId).',
  peer: 'C',
  auth: ClientAuthSchema,
  refusal: HandshakeErrorDataSchema,
  refusalCodes: [
    'ORIGIN_NOT_ALLOWED',
    'RATE_LIMITED',
    'SERVER_SHUTTING_DOWN',
    'SERVER_UNAVAILABLE',
    'SERVER_BUSY',
    'TOKEN_REQUIRED',
    'TOKEN_INVALID',
    'TOKEN_EXPIRED',
    'SUB_REQUIRED',
    'SUB_RESERVED',
    'AGENT_ID_REQUIRED',
    'AGENT_ID_INVALID',
    'AGENT_NOT_ALLOWED',
    'USER_DEACTIVATED',
  ],
  receive: {
    [Events.message]: {
      summary: 'A chat message to the bot; acked once the chosen runtime acknowledged it.',
      payload: ClientMessageSchema,
      ack: SendAckSchema,
    },
    [Events.authRefresh]: {
      summary: 'A fresh token (same sub and admin status) for the running session.',
      payload: AuthRefreshSchema,
      ack: RefreshAckSchema,
    },
    [Events.history]: {
      summary: "A page of the conversation's earlier messages, oldest first.",
      payload: HistoryRequestSchema,
      ack: HistoryAckSchema,
    },
    [Events.stop]: {
      summary: "Stop a stream of this conversation, by its id or by the user's clientMessageId it answers.",
      payload: StopRequestSchema,
      ack: StopAckSchema,
    },
    [Events.feedback]: {
      summary: 'Rate a bot message of this conversation (null withdraws); kept in the log, passed to the bot.',
      payload: FeedbackRequestSchema,
      ack: FeedbackAckSchema,
    },
    [Events.approval]: {
      summary: "Decide on a tool call's approval request; the first decision is recorded, shown to every tab and delivered to the bot.",
      payload: ApprovalRequestSchema,
      ack: ApprovalAckSchema,
    },
  } satisfies Direction<ClientToHubEvents>,
  send: {
    [Events.session]: { summary: 'Right after connect, before any other event.', payload: SessionInfoSchema },
    [Events.message]: {
      summary: "A message of the conversation: the bot's, or the user's own from another tab.",
      payload: ClientInboundMessageSchema,
    },
    [Events.agentStatus]: { summary: 'The bot went from 0 to ≥ 1 runtimes, or back.', payload: AgentStatusSchema },
    [Events.authExpiring]: { summary: '60 s before the token expires (at once if less is left).', payload: AuthExpiringSchema },
    [Events.sessionClosed]: {
      summary: 'Just before the hub ends the session.',
      payload: SessionClosedSchema,
      codes: ['TOKEN_EXPIRED', 'USER_DEACTIVATED', 'RATE_LIMITED', 'SERVER_UNAVAILABLE'],
    },
    [Events.debug]: { summary: "A runtime's trace; admin sockets only.", payload: DebugTraceSchema },
    [Events.messageStart]: {
      summary: 'A streamed message began, or is open at (re)connect: the text so far and how many deltas it holds.',
      payload: MessageStartSchema,
    },
    [Events.messageDelta]: { summary: 'A piece of an open stream, numbered from 1.', payload: MessageDeltaSchema },
    [Events.messageEnd]: { summary: 'A stream ended: its final text, parts and status.', payload: MessageEndSchema },
    [Events.messagePart]: {
      summary: 'A whole part of a message: a new one, or one that changed (an update, an approval decided).',
      payload: MessagePartEventSchema,
    },
    [Events.agentActivity]: { summary: 'What the bot is doing; ephemeral, cleared by idle.', payload: AgentActivitySchema },
    [Events.conversationControl]: {
      summary: "Who answers this user changed: an operator joined ('human', with their name), or the bot is back ('bot').",
      payload: ClientConversationControlSchema,
    },
  } satisfies Direction<HubToClientEvents>,
} satisfies NamespaceSpec;

const agent = {
  path: Namespaces.agent,
  title: 'Agent runtimes',
  description: 'One socket per runtime of a bot (agentId); several runtimes may serve one bot.',
  peer: 'A',
  auth: AgentAuthSchema,
  refusal: HandshakeErrorDataSchema,
  refusalCodes: [
    'RATE_LIMITED',
    'SERVER_SHUTTING_DOWN',
    'SERVER_UNAVAILABLE',
    'SERVER_BUSY',
    'API_KEY_INVALID',
    'AGENT_ID_REQUIRED',
    'AGENT_ID_INVALID',
    'AGENT_NOT_ALLOWED',
    'AGENT_RUNTIME_LIMIT',
  ],
  receive: {
    [Events.reply]: {
      summary: "A reply to one client, or to all the bot's clients with to '*'.",
      payload: AgentReplySchema,
      ack: SendAckSchema,
    },
    [Events.debug]: {
      summary: "A trace for the bot's admin sockets; clientId labels the conversation.",
      payload: AgentDebugSchema,
      ack: DebugAckSchema,
    },
    [Events.streamStart]: {
      summary: 'Open a streamed reply to one client; the ack carries its id once the open stream is recorded.',
      payload: StreamStartSchema,
      ack: StreamStartAckSchema,
    },
    [Events.streamDelta]: {
      summary: 'Append a piece of text to an open stream this socket started; the ack is optional.',
      payload: StreamDeltaSchema,
      ack: StreamDeltaAckSchema,
    },
    [Events.streamPart]: {
      summary: 'Append a new part to an open stream this socket started; the ack carries its seq and index.',
      payload: StreamPartSchema,
      ack: StreamPartAckSchema,
    },
    [Events.streamUpdate]: {
      summary: "Merge fields into a part of an open stream (its type never changes; a tool call's state only moves forward).",
      payload: StreamUpdateSchema,
      ack: StreamUpdateAckSchema,
    },
    [Events.streamEnd]: {
      summary: 'End a stream; the ack means the final message is in the log.',
      payload: StreamEndSchema,
      ack: StreamEndAckSchema,
    },
    [Events.activity]: { summary: 'What the bot is doing for one client.', payload: ActivityUpdateSchema, ack: ActivityAckSchema },
    [Events.handoff]: {
      summary: "Ask for a person for one user: the conversation turns 'waiting' for the bot's operators.",
      payload: HandoffRequestSchema,
      ack: HandoffAckSchema,
      codes: ['CONVERSATION_HELD'],
    },
  } satisfies Direction<AgentToHubEvents>,
  send: {
    [Events.message]: {
      summary: 'A client message, to one runtime of the bot; the runtime acks it on receipt.',
      payload: AgentInboundMessageSchema,
      ack: RuntimeAckSchema,
    },
    [Events.sessionClosed]: {
      summary: 'Just before the hub ends the session.',
      payload: SessionClosedSchema,
      codes: ['API_KEY_REVOKED'],
    },
    [Events.stop]: {
      summary: 'A user stopped a stream this runtime owns (or the answer to a message it received); end it cancelled.',
      payload: AgentStopSchema,
    },
    [Events.feedback]: { summary: "A user's rating of one of the bot's messages (best effort).", payload: AgentFeedbackSchema },
    [Events.approval]: {
      summary: "A user's decision on one of the bot's approval requests; ack it (redelivered until acked, drop a repeated id).",
      payload: AgentApprovalSchema,
      ack: RuntimeApprovalAckSchema,
    },
    [Events.conversationControl]: {
      summary: "Who answers a user changed; while 'human' that user's messages come observed and replies are refused.",
      payload: ConversationControlSchema,
    },
  } satisfies Direction<HubToAgentEvents>,
} satisfies NamespaceSpec;

const operator = {
  path: Namespaces.operator,
  title: 'Operator consoles',
  description:
    "One socket per console and bot: the bot's changes of control, the messages of conversations handed off or followed, and its debug traces (docs/handoff.md).",
  peer: 'O',
  auth: OperatorAuthSchema,
  refusal: HandshakeErrorDataSchema,
  refusalCodes: [
    'ORIGIN_NOT_ALLOWED',
    'RATE_LIMITED',
    'SERVER_SHUTTING_DOWN',
    'SERVER_UNAVAILABLE',
    'SERVER_BUSY',
    'TOKEN_REQUIRED',
    'TOKEN_INVALID',
    'TOKEN_EXPIRED',
    'OPERATOR_REQUIRED',
    'AGENT_ID_REQUIRED',
    'AGENT_ID_INVALID',
    'AGENT_NOT_ALLOWED',
    'USER_DEACTIVATED',
  ],
  receive: {
    [Events.conversationWatch]: {
      summary: "Follow one user's conversation live (replacing the one followed before); acked with its newest messages and open streams.",
      payload: WatchRequestSchema,
      ack: WatchAckSchema,
    },
    [Events.approval]: {
      summary:
        "Decide, as an operator, on a tool call's approval request in one of the bot's conversations: recorded, shown and delivered as a user's decision, decidedBy the operator's name.",
      payload: OperatorApprovalRequestSchema,
      ack: ApprovalAckSchema,
    },
  } satisfies Direction<OperatorToHubEvents>,
  send: {
    [Events.operatorSession]: { summary: 'Right after connect: the bot and the name users see.', payload: OperatorSessionSchema },
    [Events.conversationControl]: { summary: "Who answers one of the bot's conversations changed.", payload: ConversationControlSchema },
    [Events.conversationMessage]: {
      summary: "A message of a conversation handed off ('waiting' or 'human') or followed: the user's, the bot's, an operator's.",
      payload: OperatorFeedMessageSchema,
    },
    [Events.messageStart]: { summary: 'A streamed answer began in the conversation followed.', payload: MessageStartSchema },
    [Events.messageDelta]: { summary: 'A piece of that stream.', payload: MessageDeltaSchema },
    [Events.messagePart]: { summary: 'A whole part of that stream: a new one, or one that changed.', payload: MessagePartEventSchema },
    [Events.messageEnd]: { summary: 'That stream ended.', payload: MessageEndSchema },
    [Events.debug]: { summary: "A runtime's trace, of every conversation of the bot; clientId labels it.", payload: DebugTraceSchema },
  } satisfies Direction<HubToOperatorEvents>,
} satisfies NamespaceSpec;

/** Every namespace, keyed by the name the AsyncAPI document gives their channels. */
export const ProtocolRegistry: Readonly<Record<'client' | 'agent' | 'operator', NamespaceSpec>> = { client, agent, operator };

/**
 * Socket.IO's own names for the handshake: the CONNECT packet carries `auth`, a refusal is a
 * CONNECT_ERROR that the client sees as the `connect_error` event.
 */
export const HandshakeNames = { connect: 'connect', refusal: 'connect_error' } as const;
