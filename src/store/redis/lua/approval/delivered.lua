-- KEYS: the delivered mark, the bot's undelivered set and their deliveries. ARGV: ttl s, the member.
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
