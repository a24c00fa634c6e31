-- KEYS: the record (a hash: `v` version, `r` the record's JSON), the bot's index of conversations
-- handed off (clientId scored by the change's time). ARGV: expected version, the JSON to store,
-- the new state, its time in ms, clientId, seconds a record handed back to the bot is kept.
-- Returns { 1, version } when written, { 0, version, json|false } with the current record otherwise.
-- The JSON is made in TypeScript; the script only compares versions and moves the index.
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) then return { 0, v, redis.call('HGET', KEYS[1], 'r') } end
v = v + 1
redis.call('HSET', KEYS[1], 'v', v, 'r', ARGV[2])
if ARGV[3] == 'bot' then
  redis.call('ZREM', KEYS[2], ARGV[5])
  redis.call('EXPIRE', KEYS[1], ARGV[6])
else
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
  redis.call('PERSIST', KEYS[1])
end
return { 1, v }
