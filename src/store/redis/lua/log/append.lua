-- KEYS: stream, the bot's clock, the user-index marker (none for broadcasts), then the quota's three.
-- ARGV: as append's after the keys, then '1' to first look for the id (a message logged before is not
-- logged again) or '', then the hub's clock (ms), then the quota's four. Returns 0 when the id was
-- found, -3 when the bot's quota has no room for the message (nothing written), else as append; with
-- the conversations dropped to make room: { result, evicted clientIds }.
local now = tonumber(ARGV[6])
--#include quota
--#include find
--#include append
local Q = quota_of(#KEYS - 2, 7)
local marker = #KEYS == 6 and KEYS[3] or nil
if ARGV[5] == '1' and find(ARGV[1], { KEYS[1] }, tonumber(ARGV[3])) then return { 0, {} } end
if not q_reserve(Q, #ARGV[2] + #ARGV[1] + ENTRY_OVERHEAD, Q.member) then return { -3, {} } end
return { append(KEYS[1], KEYS[2], marker, ARGV[1], ARGV[2], ARGV[3], ARGV[4], nil, Q), Q.evicted }
