-- KEYS: stream, overlay. ARGV: id, the log's max entries. Returns false (not a message of the conversation)
-- or { entry json, final json or false }.
--#include find
local sid = find(ARGV[1], { KEYS[1] }, tonumber(ARGV[2]), true)
if not sid then return false end
return { redis.call('XRANGE', KEYS[1], sid, sid)[1][2][4], redis.call('HGET', KEYS[2], 'f:' .. ARGV[1]) }
