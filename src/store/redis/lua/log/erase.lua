-- KEYS: the conversation's stream, user-index marker, legacy index, overlay, set of open streams, then the
-- quota's three. ARGV: the hub's clock (ms), the quota's four. The open streams' keys are built here
-- (redis-stream.store.ts's layout): they share the bot's slot. Returns 1 when the stream existed, else 0.
local now = tonumber(ARGV[1])
--#include quota
local Q = quota_of(6, 2)
local existed = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
for _, id in ipairs(redis.call('SMEMBERS', KEYS[5])) do
  redis.call('DEL', Q.bot .. ':stream:' .. id, Q.bot .. ':stream:' .. id .. ':changes')
  q_forget(Q, Q.streams, 's:', id)
end
redis.call('DEL', KEYS[5])
q_forget(Q, Q.convs, 'c:', Q.member)
return existed
