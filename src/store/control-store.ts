import type { ControlState } from '../protocol';

/** The operator holding a conversation: their token's `sub`, and the name users see (`name` claim, else `sub`). */
export interface OperatorRef {
  sub: string;
  name: string;
}

/**
 * Who answers one conversation (docs/handoff.md). `version` counts the changes since the record
 * was made (0: never changed, which reads as `bot`); every change is a compare-and-set on it.
 */
export interface ControlRecord {
  agentId: string;
  clientId: string;
  state: ControlState;
  version: number;
  /** When the conversation entered `state` (ISO); null for a conversation never handed off. */
  since: string | null;
  /** Why the bot asked for a person, and what it tells the operator; kept while `waiting` and `human`. */
  reason?: string;
  summary?: string;
  /** The operator holding a `human` conversation. */
  operator?: OperatorRef;
  /** The holder's last message, or the takeover (ISO); the idle hand-back counts from it. */
  lastOperatorAt?: string;
}

/** A record's content as a change sets it: everything but its key and version. */
export type ControlChange = Omit<ControlRecord, 'agentId' | 'clientId' | 'version'>;

/** What {@link ControlStore.compareAndSet} did: the record written, or the newer one it found instead. */
export type ControlCas = { ok: true; record: ControlRecord } | { ok: false; current: ControlRecord };

/** A conversation, by bot and user. */
export interface ConversationRef {
  agentId: string;
  clientId: string;
}

/**
 * The control state of every conversation, shared by every replica (docs/handoff.md). Changes are
 * compare-and-set on the record's version, so of two operators taking over at once exactly one
 * wins, whichever replicas they reached.
 */
export interface ControlStore {
  /** The conversation's record; a conversation never handed off reads as `bot`, version 0. */
  get(agentId: string, clientId: string): Promise<ControlRecord>;
  /** Writes `next` (version + 1) when the record is still at `expectedVersion`; else returns the current record. */
  compareAndSet(agentId: string, clientId: string, expectedVersion: number, next: ControlChange): Promise<ControlCas>;
  /** The bot's conversations not in `bot` state, oldest change first. */
  listHandedOff(agentId: string): Promise<ControlRecord[]>;
  /**
   * Conversations, of any bot, held by an operator whose last message (or takeover) is at or
   * before `beforeMs`: candidates for the idle hand-back, which must re-check each (the index is
   * written after the record, so it may be stale either way for a moment).
   */
  idleSince(beforeMs: number, limit: number): Promise<ConversationRef[]>;
  /** Takes a conversation out of the idle index (the sweep found it no longer held). */
  dropIdle(ref: ConversationRef): Promise<void>;
}

/** The record of a conversation never handed off. */
export function botRecord(agentId: string, clientId: string, version = 0): ControlRecord {
  return { agentId, clientId, state: 'bot', version, since: null };
}

/**
 * A bot's reply or stream the store refused because an operator holds the conversation
 * (docs/handoff.md): nothing was written or published. The check is made by the write itself, in
 * the same step (one Redis round trip).
 */
export class ConversationHeldError extends Error {
  constructor(readonly record: ControlRecord) {
    super('an operator holds this conversation');
    this.name = 'ConversationHeldError';
  }
}
