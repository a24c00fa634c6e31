import type { ApprovalStore } from './approval-store';
import type { RateBudget } from '../limits/rate-budgets';
import type { LimiterFactory } from '../limits/limiter-factory';
import type { AgentDepartures } from './agent-departures';
import type { ControlStore } from './control-store';
import type { ControlState } from '../protocol';
import type { ConversationLog, LoggedMessage, Template } from './conversation-log';
import type { StreamStore } from './stream-store';

/**
 * Shared state behind one interface: in memory for the embedded single replica, Redis when
 * Redis is configured (every replica sees the same state). Implementations know no transport.
 */

/** What the hub remembers of a client message for DEDUPE_WINDOW_S. */
export interface DedupeRecord {
  id: string;
  ts: string;
  delivered: boolean;
}

/** Which client message a record is for: the bot, the sender's `sub` and the sender's own id. */
export interface DedupeKey {
  agentId: string;
  sub: string;
  clientMessageId: string;
}

export interface DedupeStore {
  /** Stores `record` under `key` unless a record exists; returns the existing record, or null if stored. */
  claim(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<DedupeRecord | null>;
  /** The live record under `key`, or null. */
  find(key: DedupeKey): Promise<DedupeRecord | null>;
  /** Marks the record delivered (keeping its id and ts) for another `ttlS`. */
  markDelivered(key: DedupeKey, record: DedupeRecord, ttlS: number): Promise<void>;
}

/** Deactivated subjects. A deactivation outlives the user record. */
export interface DeactivationStore {
  isDeactivated(sub: string): Promise<boolean>;
  /** Which of `subs` are deactivated, in one round trip per batch. */
  deactivatedAmong(subs: readonly string[]): Promise<Set<string>>;
  deactivate(sub: string): Promise<void>;
  activate(sub: string): Promise<void>;
}

/** One connected agent runtime: which socket, on which replica. */
export interface RuntimeEntry {
  socketId: string;
  replicaId: string;
}

export interface AgentPresence {
  agentId: string;
  runtimes: number;
  clients: number;
}

/**
 * Who is connected, cluster-wide. Entries belong to the replica that holds the socket; in Redis they
 * expire unless that replica refreshes them, so a dead replica's entries disappear.
 */
export interface PresenceStore {
  /** Adds a runtime and returns the bot's runtime count afterwards. */
  addRuntime(agentId: string, entry: RuntimeEntry): Promise<number>;
  /** Removes a runtime and returns the bot's runtime count afterwards. */
  removeRuntime(agentId: string, entry: RuntimeEntry): Promise<number>;
  listRuntimes(agentId: string): Promise<RuntimeEntry[]>;
  addClient(agentId: string, entry: RuntimeEntry): Promise<void>;
  removeClient(agentId: string, entry: RuntimeEntry): Promise<void>;
  /** Bots with at least one runtime or client, sorted by agentId. */
  listAgents(): Promise<AgentPresence[]>;
  getAgent(agentId: string): Promise<AgentPresence>;
}

/** A client message arriving, for {@link MessageIntake.admit}. */
export interface IntakeRequest {
  key: DedupeKey;
  /** The record to store when none exists for `key`. */
  record: DedupeRecord;
  ttlS: number;
  /** The sender's conversation. */
  clientId: string;
  /** The message as it will be logged, with `record`'s id; null when the log is off. */
  message: LoggedMessage | null;
  /**
   * A pub/sub shard channel whose subscribers to count, or null: the channel that carries the
   * sender's room between replicas, so the relay can tell whether another replica holds a tab.
   */
  subscribersOf: string | null;
  /** How to hand the message to its runtime in the same step, where the store can; null: the caller delivers. */
  handoff: Handoff | null;
  /**
   * The sender's budget for messages to this bot (one bucket per agentId and sub, spent by every
   * socket on every replica), taken from before anything else; absent or null: unlimited.
   */
  budget?: RateBudget | null;
}

/**
 * A delivery a store may start with the intake, so that a client message whose runtime is on another
 * replica costs one Redis step before that replica has it, not two. When the record is new, a
 * runtime is live and the message is logged (or the log is off), the store picks the runtime by
 * rendezvous hashing and, if another replica holds it, publishes the delivery request to that
 * replica's channel. Built by the relay's dispatcher; only Redis stores on one server (or Sentinel)
 * use it, where the replica channels live beside the bot's keys.
 */
export interface Handoff {
  /** The rendezvous seed of the sender's sub (see relay/rendezvous.ts); candidates are runtime socket ids (ASCII). */
  seed: number;
  /** This replica: its own runtimes are left to the caller. */
  replicaId: string;
  /** A replica's channel is `channel.before + replicaId + channel.after`. */
  channel: Template;
  /**
   * The request is `request.before + the runtime's socket id as a JSON string + request.after`
   * (json-frames.ts), with `observed` inserted at `request.at` in `after` when an operator holds the
   * conversation (the bot gets the message marked observed: docs/handoff.md).
   */
  request: Template & { at: number; observed: string };
}

/** What {@link MessageIntake.admit} found and did. */
export interface Intake {
  /** Set when the sender's budget was spent: nothing was claimed, read, logged or handed off. */
  limited?: true;
  /**
   * Set when the message was to be logged and the bot's quota had no room for it (store/bot-quota.ts):
   * nothing was claimed, logged or handed off.
   */
  quota?: true;
  /** The record stored earlier for the same key (a retry), or null: the request's record is stored now. */
  existing: DedupeRecord | null;
  /** The bot's live runtimes; not read (empty) when `existing` is delivered. */
  runtimes: RuntimeEntry[];
  /** Whether the message was appended to the log. */
  logged: boolean;
  /** Connections subscribed to `subscribersOf`; null when not asked or not counted (or `existing` is delivered). */
  subscribers: number | null;
  /**
   * The runtime (one of `runtimes`, on another replica) the store published the request to, and how
   * many connections received it (0: that replica is gone); null when nothing was handed off.
   */
  handedTo: { runtime: RuntimeEntry; receivers: number } | null;
  /**
   * The runtime the store's rendezvous pick chose (one of `runtimes`), on any replica: set whenever
   * it picked (a {@link Handoff} given, the record new, a runtime live). The relay delivers to it and
   * picks again only where the store did not, so a message's runtime is chosen once.
   */
  picked?: RuntimeEntry;
  /** Who answers the sender's conversation (docs/handoff.md), read in the same step; `bot` when refused before it. */
  control: ControlState;
}

/**
 * The first step of every client message, in one round trip on Redis: spend the sender's budget
 * (refusing the message when it is spent), read the conversation's control state, claim the dedupe record,
 * read the bot's live runtimes and, when the record is new, a runtime is live and a message is
 * given, append the message to the sender's conversation. The rest is the caller's: the append of
 * a retry (under the first record's id) and of a message that waited for a runtime (restart grace).
 */
export interface MessageIntake {
  admit(request: IntakeRequest): Promise<Intake>;
}

/** A user of the integrator; `id` is the JWT `sub`. */
export interface UserRecord {
  id: string;
  email: string;
  name: string;
  phone: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface UserQuery {
  offset: number;
  limit: number;
  /** Exact (case-insensitive) email. */
  email?: string;
  /** Case-insensitive substring of id, email or name. */
  q?: string;
}

/** Thrown by create/update when a unique field is taken. */
export class DuplicateError extends Error {
  constructor(readonly field: 'id' | 'email') {
    super(`${field} already exists`);
    this.name = 'DuplicateError';
  }
}

export interface UserStore {
  list(query: UserQuery): Promise<{ items: UserRecord[]; total: number }>;
  get(id: string): Promise<UserRecord | null>;
  /** Throws {@link DuplicateError} when id or email exists. */
  create(user: UserRecord): Promise<void>;
  /** Returns the updated record or null when unknown; throws {@link DuplicateError} on a taken email. */
  update(id: string, patch: Partial<Pick<UserRecord, 'email' | 'name' | 'phone'>>): Promise<UserRecord | null>;
  /** Returns the deleted record or null when unknown. */
  delete(id: string): Promise<UserRecord | null>;
}

/** A REST API key; the secret itself is never stored, only its SHA-256 hash (hex). */
export interface ApiKeyRecord {
  id: string;
  name: string;
  scopes: string[];
  /** First characters of the key, shown to tell keys apart. */
  prefix: string;
  hash: string;
  createdAt: string;
  lastUsedAt: string | null;
  /**
   * Bots the key acts for on every scope it holds: exact agentIds, or prefixes ending in `*`
   * (`*` alone: every bot). Absent on keys created before keys were bound to bots: those act for
   * every bot, as with `["*"]`.
   */
  agentIds?: string[];
  /** Whether a `messages:publish` key may publish to `to: 'admin'` (the bot's admins). */
  adminRecipient?: boolean;
}

export interface ApiKeyStore {
  list(): Promise<ApiKeyRecord[]>;
  get(id: string): Promise<ApiKeyRecord | null>;
  create(record: ApiKeyRecord): Promise<void>;
  delete(id: string): Promise<ApiKeyRecord | null>;
  findByHash(hash: string): Promise<ApiKeyRecord | null>;
  touch(id: string, at: string): Promise<void>;
}

export interface Store {
  readonly kind: 'memory' | 'redis';
  readonly dedupe: DedupeStore;
  /** Dedupe, presence and the log together, for an arriving client message. */
  readonly intake: MessageIntake;
  readonly deactivations: DeactivationStore;
  readonly presence: PresenceStore;
  readonly users: UserStore;
  readonly apiKeys: ApiKeyStore;
  readonly limiters: LimiterFactory;
  /** Conversation logs (docs/protocol.md, "Conversations and delivery guarantees"). */
  readonly log: ConversationLog;
  /** Open streamed replies (docs/streaming.md). */
  readonly streams: StreamStore;
  /** Users' decisions on bots' approval requests (docs/parts.md). */
  readonly approvals: ApprovalStore;
  /** When bots' last runtimes left, for the restart grace. */
  readonly departures: AgentDepartures;
  /** Who answers each conversation: the bot, nobody yet, or an operator (docs/handoff.md). */
  readonly control: ControlStore;
  close(): Promise<void>;
}
