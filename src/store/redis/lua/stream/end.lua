-- KEYS: hash, changes, set, the log's stream, clock, user-index marker, overlay, then the quota's three.
-- ARGV: id, the final's JSON, the seq it was built from, '1' to log, log max, log ttl s, now ms, then a
-- shard channel ('' for none) and the whole publication of its \`message:end\`, published once the
-- marker is logged, then the quota's four. Returns false (not open), -1 (changed since the caller read
-- it: build again) or the seq. Overlay fields of messages older than the oldest entry the log keeps are
-- pruned here (UUIDv7 ids sort by time). The stream's bytes leave the quota; the final's join its
-- conversation's.
local now = tonumber(ARGV[7])
--#include quota
--#include find
--#include append
local Q = quota_of(8, 10)
local seq = redis.call('HGET', KEYS[1], 'seq')
if not seq then q_forget(Q, Q.streams, 's:', ARGV[1]); return false end
if seq ~= ARGV[3] then return -1 end
local final = ARGV[2]
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
q_forget(Q, Q.streams, 's:', ARGV[1])
if ARGV[4] == '1' then
  local max, ttl = tonumber(ARGV[5]), tonumber(ARGV[6])
  append(KEYS[4], KEYS[5], KEYS[6], ARGV[1], '{"endOf":"' .. ARGV[1] .. '"}', max, ttl, 'e', Q)
  local conv = 'c:' .. Q.member
  q_charge(Q, conv, #final - redis.call('HSTRLEN', KEYS[7], 'f:' .. ARGV[1]))
  redis.call('HSET', KEYS[7], 'f:' .. ARGV[1], final)
  redis.call('EXPIRE', KEYS[7], ttl)
  local sid = oldest_kept(KEYS[4], redis.call('XLEN', KEYS[4]), max)
  local first = sid and redis.call('XRANGE', KEYS[4], sid, sid) or redis.call('XRANGE', KEYS[4], '-', '+', 'COUNT', 1)
  if first[1] then
    local oldest = first[1][2][2]
    for _, field in ipairs(redis.call('HKEYS', KEYS[7])) do
      if string.sub(field, 3) < oldest then
        local held = tonumber(redis.call('HGET', Q.sizes, conv) or '0')
        if string.sub(field, 1, 2) == 'f:' then q_charge(Q, conv, -math.min(held, redis.call('HSTRLEN', KEYS[7], field))) end
        redis.call('HDEL', KEYS[7], field)
      end
    end
  end
end
if ARGV[8] ~= '' then redis.call('SPUBLISH', ARGV[8], ARGV[9]) end
return tonumber(seq)
