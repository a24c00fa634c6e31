-- KEYS keys, used. ARGV id, at.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) end
return 1
