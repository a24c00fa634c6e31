import type { ApprovalDecision } from '../../protocol';
import type { ApprovalRecord, ApprovalRef, ApprovalStore } from '../approval-store';
import { hashTag, type RedisClient } from './redis-client';
import { LuaScript } from './lua-script';

// KEYS: the decision, its delivered mark. ARGV: the decision's JSON, ttl s. Returns { decision json, 1 when
// this call recorded it, 1 when it was delivered }.
const DECIDE = new LuaScript(`
local held = redis.call('GET', KEYS[1])
if not held then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]); return { ARGV[1], 1, 0 } end
return { held, 0, redis.call('EXISTS', KEYS[2]) }`);

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
