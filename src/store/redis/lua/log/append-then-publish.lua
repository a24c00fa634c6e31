-- KEYS: as APPEND's. ARGV: as append's after the keys, then a shard channel and a payload, published
-- only once the append succeeded (an error in append aborts the script before the publish), then the
-- hub's clock (ms), then the quota's four. Returns { -3 (nothing written or published) or as append,
-- evicted clientIds }.
local now = tonumber(ARGV[7])
--#include quota
--#include append
local Q = quota_of(#KEYS - 2, 8)
if not q_reserve(Q, #ARGV[2] + #ARGV[1] + ENTRY_OVERHEAD, Q.member) then return { -3, {} } end
local appended = append(KEYS[1], KEYS[2], #KEYS == 6 and KEYS[3] or nil, ARGV[1], ARGV[2], ARGV[3], ARGV[4], nil, Q)
redis.call('SPUBLISH', ARGV[5], ARGV[6])
return { appended, Q.evicted }
