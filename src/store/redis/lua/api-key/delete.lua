-- KEYS keys, byHash, used. ARGV id.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local used = redis.call('HGET', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], cjson.decode(raw).hash)
redis.call('HDEL', KEYS[3], ARGV[1])
return { raw, used or '' }
