-- KEYS: the decision, its delivered mark. ARGV: the decision's JSON, ttl s. Returns { decision json, 1 when
-- this call recorded it, 1 when it was delivered }.
local held = redis.call('GET', KEYS[1])
if not held then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]); return { ARGV[1], 1, 0 } end
return { held, 0, redis.call('EXISTS', KEYS[2]) }
