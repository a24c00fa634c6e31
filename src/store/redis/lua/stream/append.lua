-- KEYS: hash, changes, the conversation's set, then the quota's three. ARGV: the encoded change, its bytes
-- (0: not bounded), max bytes, ttl ms ('' to leave the expiry as it is), a shard channel ('' for none),
-- the publication up to the change's seq and from after it, the hub's clock (ms), the quota's four, the
-- stream's id. Returns -1 (not open), -2 (too large), -3 (no room in the bot's quota) or the seq, with
-- the clientIds of the conversations the quota dropped to make room when there are any: { seq, evicted }.
-- The quota counts the change as stored and costs two increments (q_delta) while the bot is under it.
-- HINCRBY answers whether the stream is open (a missing hash counts from 0, and only the first change
-- needs to ask further); a change past the bound is undone before
-- anything is appended (the relay refuses those before they get here), and the expiry is renewed only
-- when the caller asks (docs/streaming.md, "The hub ends every stream").
local now = tonumber(ARGV[8])
--#include quota
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if seq == 1 and redis.call('HEXISTS', KEYS[1], 'm') == 0 then redis.call('DEL', KEYS[1]); return -1 end
local size = tonumber(ARGV[2])
if size > 0 and redis.call('HINCRBY', KEYS[1], 'bytes', size) > tonumber(ARGV[3]) then
  redis.call('HINCRBY', KEYS[1], 'bytes', -size)
  redis.call('HINCRBY', KEYS[1], 'seq', -1)
  return -2
end
local Q = quota_of(4, 9)
if not q_delta(Q, ARGV[13], #ARGV[1]) then
  if size > 0 then redis.call('HINCRBY', KEYS[1], 'bytes', -size) end
  redis.call('HINCRBY', KEYS[1], 'seq', -1)
  return -3
end
redis.call('APPEND', KEYS[2], ARGV[1])
if ARGV[4] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[4]); redis.call('PEXPIRE', KEYS[2], ARGV[4]); redis.call('PEXPIRE', KEYS[3], ARGV[4])
  q_touch(Q, Q.streams, ARGV[13], tonumber(ARGV[4]))
end
if ARGV[5] ~= '' then redis.call('SPUBLISH', ARGV[5], ARGV[6] .. seq .. ARGV[7]) end
if #Q.evicted > 0 then return { seq, Q.evicted } end
return seq
