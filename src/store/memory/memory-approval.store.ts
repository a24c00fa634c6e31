import type { AgentApproval, ApprovalDecision } from '../../protocol';
import type { ApprovalRecord, ApprovalRef, ApprovalStore } from '../approval-store';

interface Pending {
  delivery: AgentApproval;
  expiresAt: number;
}

interface Held {
  decision: ApprovalDecision;
  delivered: boolean;
  expiresAt: number;
}

/** Approval decisions of the single replica, expiring `ttlS` after they were recorded (swept on every decision). */
export class MemoryApprovalStore implements ApprovalStore {
  private readonly held = new Map<string, Held>();
  /** Per bot, the decisions to deliver by {@link key}, in the order recorded. */
  private readonly pending = new Map<string, Map<string, Pending>>();

  async decide(ref: ApprovalRef, decision: ApprovalDecision, ttlS: number, delivery?: AgentApproval): Promise<ApprovalRecord> {
    const now = Date.now();
    for (const [key, held] of this.held) if (held.expiresAt <= now) this.held.delete(key);
    const existing = this.held.get(key(ref));
    if (existing) return { decision: existing.decision, first: false, delivered: existing.delivered };
    this.held.set(key(ref), { decision, delivered: false, expiresAt: now + ttlS * 1000 });
    if (delivery) {
      let bot = this.pending.get(ref.agentId);
      if (!bot) this.pending.set(ref.agentId, (bot = new Map<string, Pending>()));
      bot.set(key(ref), { delivery, expiresAt: now + ttlS * 1000 });
    }
    return { decision, first: true, delivered: false };
  }

  async undelivered(agentId: string, limit: number): Promise<AgentApproval[]> {
    const bot = this.pending.get(agentId);
    if (!bot) return [];
    const now = Date.now();
    const out: AgentApproval[] = [];
    for (const [at, { delivery, expiresAt }] of bot) {
      if (expiresAt <= now) bot.delete(at);
      else if (out.length < limit) out.push(delivery);
    }
    if (bot.size === 0) this.pending.delete(agentId);
    return out;
  }

  private readonly claims = new Map<string, number>();

  async claimDelivery(ref: ApprovalRef, ms: number): Promise<boolean> {
    const now = Date.now();
    if ((this.claims.get(key(ref)) ?? 0) > now || this.held.get(key(ref))?.delivered) return false;
    this.claims.set(key(ref), now + ms);
    return true;
  }

  async releaseDelivery(ref: ApprovalRef): Promise<void> {
    this.claims.delete(key(ref));
  }

  async markDelivered(ref: ApprovalRef): Promise<void> {
    const held = this.held.get(key(ref));
    if (held) held.delivered = true;
    this.claims.delete(key(ref));
    this.pending.get(ref.agentId)?.delete(key(ref));
  }

  clear(): void {
    this.held.clear();
    this.claims.clear();
    this.pending.clear();
  }
}

function key({ agentId, messageId, approvalId }: ApprovalRef): string {
  return `${agentId} ${messageId} ${approvalId}`;
}
