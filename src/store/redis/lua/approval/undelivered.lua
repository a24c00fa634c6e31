-- KEYS: the bot's undelivered set and their deliveries. ARGV: limit. Drops the expired ones; returns
-- the deliveries' JSON, oldest first.
--#include now
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1000)
if #expired > 0 then
  redis.call('ZREM', KEYS[1], unpack(expired))
  redis.call('HDEL', KEYS[2], unpack(expired))
end
local members = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if #members == 0 then return {} end
return redis.call('HMGET', KEYS[2], unpack(members))
