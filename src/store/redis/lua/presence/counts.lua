--#include now
return { redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf'), redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') }
