-- KEYS: a conversation's stream, its user-index marker. ARGV: the marker's TTL (s). Sets the marker while
-- the conversation exists: 1, else 0.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[1])
return 1
