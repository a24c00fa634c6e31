--#include now
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
