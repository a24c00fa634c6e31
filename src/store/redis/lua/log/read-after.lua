-- KEYS: stream, broadcasts. ARGV: after id (an end marker's position when the id names a streamed message that
-- ended), max returned, the log's max entries.
-- Returns -1 (unknown id, or a trimmed gap after it), else { conversation entries, broadcast entries }.
--#include find
--#include trimmed-after
local kept = tonumber(ARGV[3])
local sid = find(ARGV[1], KEYS, kept)
if not sid then return -1 end
if trimmed_after(KEYS[1], sid, kept) or trimmed_after(KEYS[2], sid, kept) then return -1 end
local n = 2 * tonumber(ARGV[2]) + 2
return { redis.call('XRANGE', KEYS[1], '(' .. sid, '+', 'COUNT', n), redis.call('XRANGE', KEYS[2], '(' .. sid, '+', 'COUNT', n) }
