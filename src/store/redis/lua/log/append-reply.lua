-- KEYS: as APPEND's with the marker, then the conversation's control record. ARGV: as
-- APPEND_THEN_PUBLISH's, with '' for the channel when nothing is to be published. Returns { -4, {},
-- the control record's json } when an operator holds the conversation (nothing written or
-- published), else { -3 (nothing written or published) or as append, evicted clientIds, the state }.
local now = tonumber(ARGV[7])
--#include quota
--#include append
--#include control
local control, record = control_of(KEYS[7])
if control == 'human' then return { -4, {}, record } end
local Q = quota_of(4, 8)
if not q_reserve(Q, #ARGV[2] + #ARGV[1] + ENTRY_OVERHEAD, Q.member) then return { -3, {}, control } end
local appended = append(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], nil, Q)
if ARGV[5] ~= '' then redis.call('SPUBLISH', ARGV[5], ARGV[6]) end
return { appended, Q.evicted, control }
