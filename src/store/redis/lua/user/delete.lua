-- KEYS users, emails, order. ARGV id.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local user = cjson.decode(raw)
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('HGET', KEYS[2], user.emailKey) == ARGV[1] then redis.call('HDEL', KEYS[2], user.emailKey) end
redis.call('ZREM', KEYS[3], user.createdAt .. '\n' .. ARGV[1])
return raw
