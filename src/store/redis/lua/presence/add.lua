-- KEYS: this set. ARGV: member, ttlMs.
--#include now
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return { redis.call('ZCARD', KEYS[1]), now + tonumber(ARGV[2]) }
