import type { ApprovalDecision } from '../../protocol';
import type { ApprovalRecord, ApprovalRef, ApprovalStore } from '../approval-store';
import { hashTag, type RedisClient } from './redis-client';
import { luaScript } from './lua-script';

const DECIDE = luaScript('approval/decide');

/**
 * Approval decisions as plain keys with EX, in the bot's hash slot: `…{<agentId>}:approval:<messageId>:<approvalId>`
 * holds the first decision (set only when absent, in one script), `…:sending` the claim of the call
 * delivering it, `…:delivered` marks its delivery.
 */
export class RedisApprovalStore implements ApprovalStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async decide(ref: ApprovalRef, decision: ApprovalDecision, ttlS: number): Promise<ApprovalRecord> {
    const key = this.key(ref);
    const [json, first, delivered] = await DECIDE.run<[string, number, number]>(
      this.redis,
      [key, `${key}:delivered`],
      [JSON.stringify(decision), ttlS],
    );
    return { decision: JSON.parse(json) as ApprovalDecision, first: first === 1, delivered: delivered === 1 };
  }

  async claimDelivery(ref: ApprovalRef, ms: number): Promise<boolean> {
    return (await this.redis.set(`${this.key(ref)}:sending`, '1', 'PX', ms, 'NX')) === 'OK';
  }

  async releaseDelivery(ref: ApprovalRef): Promise<void> {
    await this.redis.del(`${this.key(ref)}:sending`);
  }

  async markDelivered(ref: ApprovalRef, ttlS: number): Promise<void> {
    await this.redis.set(`${this.key(ref)}:delivered`, '1', 'EX', ttlS);
  }

  private key({ agentId, messageId, approvalId }: ApprovalRef): string {
    return `${this.prefix}${hashTag(agentId)}:approval:${messageId}:${approvalId}`;
  }
}
