-- KEYS: stream, overlay. ARGV: id, the log's max entries, the message's JSON, ttl s. Returns 1, or 0 when
-- the id is not a bot message of the conversation.
--#include find
local sid = find(ARGV[1], { KEYS[1] }, tonumber(ARGV[2]), true)
if not sid then return 0 end
local entry = cjson.decode(redis.call('XRANGE', KEYS[1], sid, sid)[1][2][4])
local message = entry['stream'] or entry
if message['author'] ~= 'agent' then return 0 end
redis.call('HSET', KEYS[2], 'f:' .. ARGV[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 1
