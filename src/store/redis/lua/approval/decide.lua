-- KEYS: the decision, its delivered mark, the bot's undelivered set and their deliveries. ARGV: the
-- decision's JSON, ttl s, the member (`<messageId> <approvalId>`), the delivery's JSON ('' for none).
-- Returns { decision json, 1 when this call recorded it, 1 when it was delivered }.
local held = redis.call('GET', KEYS[1])
if held then return { held, 0, redis.call('EXISTS', KEYS[2]) } end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
if ARGV[4] ~= '' then
--#include now
  redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]) * 1000, ARGV[3])
  redis.call('HSET', KEYS[4], ARGV[3], ARGV[4])
  redis.call('EXPIRE', KEYS[3], ARGV[2])
  redis.call('EXPIRE', KEYS[4], ARGV[2])
end
return { ARGV[1], 1, 0 }
