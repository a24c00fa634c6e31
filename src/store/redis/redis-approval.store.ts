import type { AgentApproval, ApprovalDecision } from '../../protocol';
import type { ApprovalRecord, ApprovalRef, ApprovalStore } from '../approval-store';
import { hashTag, type RedisClient } from './redis-client';
import { luaScript } from './lua-script';

const DECIDE = luaScript('approval/decide');
const UNDELIVERED = luaScript('approval/undelivered');
const CLAIM = luaScript('approval/claim');
const DELIVERED = luaScript('approval/delivered');

/**
 * Approval decisions as plain keys with EX, in the bot's hash slot: `…{<agentId>}:approval:<messageId>:<approvalId>`
 * holds the first decision (set only when absent, in one script), `…:sending` the claim of the call
 * delivering it, `…:delivered` marks its delivery. `…{<agentId>}:approvals:undelivered` (a sorted
 * set by expiry) and `…:deliveries` (a hash) hold the decisions a runtime has not acked yet.
 */
export class RedisApprovalStore implements ApprovalStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async decide(ref: ApprovalRef, decision: ApprovalDecision, ttlS: number, delivery?: AgentApproval): Promise<ApprovalRecord> {
    const key = this.key(ref);
    const [json, first, delivered] = await DECIDE.run<[string, number, number]>(
      this.redis,
      [key, `${key}:delivered`, ...this.undeliveredKeys(ref.agentId)],
      [JSON.stringify(decision), ttlS, member(ref), delivery === undefined ? '' : JSON.stringify(delivery)],
    );
    return { decision: JSON.parse(json) as ApprovalDecision, first: first === 1, delivered: delivered === 1 };
  }

  async undelivered(agentId: string, limit: number): Promise<AgentApproval[]> {
    const found = await UNDELIVERED.run<(string | null)[]>(this.redis, this.undeliveredKeys(agentId), [limit]);
    return found.filter((json): json is string => json !== null).map((json) => JSON.parse(json) as AgentApproval);
  }

  async claimDelivery(ref: ApprovalRef, ms: number): Promise<boolean> {
    const key = this.key(ref);
    return (await CLAIM.run<number>(this.redis, [`${key}:sending`, `${key}:delivered`], [ms])) === 1;
  }

  async releaseDelivery(ref: ApprovalRef): Promise<void> {
    await this.redis.del(`${this.key(ref)}:sending`);
  }

  async markDelivered(ref: ApprovalRef, ttlS: number): Promise<void> {
    await DELIVERED.run(this.redis, [`${this.key(ref)}:delivered`, ...this.undeliveredKeys(ref.agentId)], [ttlS, member(ref)]);
  }

  private key({ agentId, messageId, approvalId }: ApprovalRef): string {
    return `${this.prefix}${hashTag(agentId)}:approval:${messageId}:${approvalId}`;
  }

  private undeliveredKeys(agentId: string): [string, string] {
    const base = `${this.prefix}${hashTag(agentId)}:approvals:undelivered`;
    return [base, `${base}:deliveries`];
  }
}

function member({ messageId, approvalId }: ApprovalRef): string {
  return `${messageId} ${approvalId}`;
}
