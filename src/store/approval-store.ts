import type { AgentApproval, ApprovalDecision } from '../protocol';

/** An approval request of a bot message (docs/parts.md, "Approvals"). */
export interface ApprovalRef {
  agentId: string;
  messageId: string;
  approvalId: string;
}

/** What {@link ApprovalStore.decide} found or recorded. */
export interface ApprovalRecord {
  decision: ApprovalDecision;
  /** This call recorded it (the first decision). */
  first: boolean;
  /** A runtime of the bot acked its delivery. */
  delivered: boolean;
}

/**
 * Users' decisions on approval requests, in shared state so that the first one wins on every
 * replica and device, kept `ttlS` (APPROVAL_TTL_S): write-ahead, a resolved `decide` means recorded.
 */
export interface ApprovalStore {
  /**
   * Records `decision` unless one is recorded already; either way the recorded one. With `delivery`
   * (the decision as the bot is to get it), a decision this call records is also kept among the
   * bot's {@link undelivered} ones until {@link markDelivered}.
   */
  decide(ref: ApprovalRef, decision: ApprovalDecision, ttlS: number, delivery?: AgentApproval): Promise<ApprovalRecord>;
  /**
   * The bot's decisions recorded with a delivery and not delivered yet, oldest first, at most
   * `limit` (those older than their `ttlS` are dropped): a runtime that connects gets them.
   */
  undelivered(agentId: string, limit: number): Promise<AgentApproval[]>;
  /**
   * Claims the decision's delivery for `ms` (or until {@link releaseDelivery}): false while another
   * call holds it, or once it was delivered, so two calls (two tabs, a runtime that connects) never
   * both deliver it.
   */
  claimDelivery(ref: ApprovalRef, ms: number): Promise<boolean>;
  releaseDelivery(ref: ApprovalRef): Promise<void>;
  /** A runtime acked the decision: repeats are acked at once, not delivered again, and it leaves {@link undelivered}. */
  markDelivered(ref: ApprovalRef, ttlS: number): Promise<void>;
}
