import type { ApprovalDecision } from '../../protocol';
import type { ApprovalRecord, ApprovalRef, ApprovalStore } from '../approval-store';

interface Held {
  decision: ApprovalDecision;
  delivered: boolean;
  expiresAt: number;
}

/** Approval decisions of the single replica, expiring `ttlS` after they were recorded (swept on every decision). */
export class MemoryApprovalStore implements ApprovalStore {
  private readonly held = new Map<string, Held>();

  async decide(ref: ApprovalRef, decision: ApprovalDecision, ttlS: number): Promise<ApprovalRecord> {
    const now = Date.now();
    for (const [key, held] of this.held) if (held.expiresAt <= now) this.held.delete(key);
    const existing = this.held.get(key(ref));
    if (existing) return { decision: existing.decision, first: false, delivered: existing.delivered };
    this.held.set(key(ref), { decision, delivered: false, expiresAt: now + ttlS * 1000 });
    return { decision, first: true, delivered: false };
  }

  private readonly claims = new Map<string, number>();

  async claimDelivery(ref: ApprovalRef, ms: number): Promise<boolean> {
    const now = Date.now();
    if ((this.claims.get(key(ref)) ?? 0) > now) return false;
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
  }

  clear(): void {
    this.held.clear();
    this.claims.clear();
  }
}

function key({ agentId, messageId, approvalId }: ApprovalRef): string {
  return `${agentId} ${messageId} ${approvalId}`;
}
