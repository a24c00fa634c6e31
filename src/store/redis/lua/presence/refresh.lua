-- KEYS: runtimes, clients. ARGV: ttlMs, runtime count, runtime members…, client members….
-- Returns { change, expiry }: change -1 when this call pruned the bot's last runtimes (their replica
-- died or lost Redis for a TTL), 1 when its own runtimes brought the bot back from none, else 0.
-- Pruning is atomic, so exactly one replica sees each transition, and it announces it.
--#include now
local ttl = tonumber(ARGV[1]); local exp = now + ttl; local nr = tonumber(ARGV[2])
local pruned = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local before = redis.call('ZCARD', KEYS[1])
for i = 3, #ARGV do
  local key = KEYS[2]; if i < 3 + nr then key = KEYS[1] end
  redis.call('ZADD', key, exp, ARGV[i])
end
for _, key in ipairs({ KEYS[1], KEYS[2] }) do
  if redis.call('EXISTS', key) == 1 then redis.call('PEXPIRE', key, ttl) end
end
local after = redis.call('ZCARD', KEYS[1])
local change = 0
if before == 0 and after > 0 then change = 1 end
if pruned > 0 and after == 0 then change = -1 end
return { change, exp }
