-- KEYS: a key. ARGV: the value it must hold. Deletes the key only while it holds that value (a compare-and-delete); returns 1 when deleted, else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0
