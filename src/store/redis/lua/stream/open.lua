-- KEYS: hash, changes, set, then the log's stream, clock, user-index marker, then the quota's three,
-- then the conversation's control record. ARGV: m, client, owner, ttl ms, '1' to log, id, start
-- entry json, log max, log ttl s, now ms, the quota's four, the bot's most open streams. Returns
-- { -5, the control record's json } (an operator holds the conversation), -3 (the bot has its most
-- streams open), -4 (no room in its bytes; nothing written in each case), else { append's result or
-- 1, evicted clientIds }.
local now = tonumber(ARGV[10])
--#include quota
--#include append
--#include control
local control, record = control_of(KEYS[10])
if control == 'human' then return { -5, record } end
local Q = quota_of(7, 11)
local max_open = tonumber(ARGV[15])
if redis.call('ZCARD', Q.streams) >= max_open then
  q_reclaim(Q)
  if redis.call('ZCARD', Q.streams) >= max_open then return -3 end
end
local need = STREAM_OVERHEAD
if ARGV[5] == '1' then need = need + #ARGV[7] + #ARGV[6] + ENTRY_OVERHEAD end
if not q_reserve(Q, need, Q.member) then return -4 end
redis.call('HSET', KEYS[1], 'm', ARGV[1], 'client', ARGV[2], 'owner', ARGV[3], 'seq', 0, 'bytes', 0)
redis.call('SET', KEYS[2], '', 'PX', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('SADD', KEYS[3], ARGV[6])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
q_take(Q, 's:' .. ARGV[6], STREAM_OVERHEAD)
q_touch(Q, Q.streams, ARGV[6], tonumber(ARGV[4]))
if ARGV[5] == '1' then return { append(KEYS[4], KEYS[5], KEYS[6], ARGV[6], ARGV[7], ARGV[8], ARGV[9], nil, Q), Q.evicted } end
return { 1, Q.evicted }
