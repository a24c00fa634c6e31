-- KEYS: an index bucket. Returns its live bot ids.
--#include now
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)
