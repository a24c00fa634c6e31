import type { AgentApproval, ApprovalDecision } from '../../protocol';
import type { ApprovalRecord, ApprovalRef, ApprovalStore } from '../approval-store';
import { hashTag, type RedisClient } from './redis-client';
import { LUA_NOW, LuaScript } from './lua-script';

// KEYS: the decision, its delivered mark, the bot's undelivered set and their deliveries. ARGV: the
// decision's JSON, ttl s, the member (`<messageId> <approvalId>`), the delivery's JSON ('' for none).
// Returns { decision json, 1 when this call recorded it, 1 when it was delivered }.
const DECIDE = new LuaScript(`
local held = redis.call('GET', KEYS[1])
if held then return { held, 0, redis.call('EXISTS', KEYS[2]) } end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
if ARGV[4] ~= '' then
  ${LUA_NOW}
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]) * 1000, ARGV[3])
  redis.call('HSET', KEYS[4], ARGV[3], ARGV[4])
  redis.call('EXPIRE', KEYS[3], ARGV[2])
  redis.call('EXPIRE', KEYS[4], ARGV[2])
end
return { ARGV[1], 1, 0 }`);

// KEYS: the bot's undelivered set and their deliveries. ARGV: limit. Drops the expired ones; returns
// the deliveries' JSON, oldest first.
const UNDELIVERED = new LuaScript(`
${LUA_NOW}
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1000)
if #expired > 0 then
  redis.call('ZREM', KEYS[1], unpack(expired))
  redis.call('HDEL', KEYS[2], unpack(expired))
end
local members = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if #members == 0 then return {} end
return redis.call('HMGET', KEYS[2], unpack(members))`);

// KEYS: the claim, the delivered mark. ARGV: ms. Returns 1 when claimed (not delivered, not claimed by another call).
const CLAIM = new LuaScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('SET', KEYS[1], '1', 'PX', ARGV[1], 'NX') then return 1 end
return 0`);

// KEYS: the delivered mark, the bot's undelivered set and their deliveries. ARGV: ttl s, the member.
const DELIVERED = new LuaScript(`
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])`);

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
