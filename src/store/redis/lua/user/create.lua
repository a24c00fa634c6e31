-- KEYS users, emails, order. ARGV id, emailKey, json, order member.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 'id' end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 'email' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[3], 0, ARGV[4])
return 'ok'
