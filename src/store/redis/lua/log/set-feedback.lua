-- KEYS: conversation stream, overlay. ARGV: message id, the log's max entries, feedback json ('' withdraws it), ttl
-- seconds. Returns 1 when the id is a bot message of the conversation (and the feedback was kept), else 0.
--#include find
local sid = find(ARGV[1], { KEYS[1] }, tonumber(ARGV[2]), true)
if not sid then return 0 end
local fields = redis.call('XRANGE', KEYS[1], sid, sid)[1][2]
local entry = cjson.decode(fields[4])
local message = entry['stream'] or entry
if message['author'] ~= 'agent' then return 0 end
if ARGV[3] == '' then redis.call('HDEL', KEYS[2], 'r:' .. ARGV[1])
else redis.call('HSET', KEYS[2], 'r:' .. ARGV[1], ARGV[3]); redis.call('EXPIRE', KEYS[2], ARGV[4]) end
return 1
