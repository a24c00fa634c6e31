-- KEYS: the conversation's set. ARGV: the bot's key prefix. Returns { m, client, owner, seq, changes } per
-- open stream (forgetting ids whose stream expired). The stream keys are built here: they share the set's slot.
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local hash = ARGV[1] .. ':stream:' .. id
  if redis.call('EXISTS', hash) == 1 then
    local m = redis.call('HMGET', hash, 'm', 'client', 'owner', 'seq')
    out[#out + 1] = { m[1], m[2], m[3], m[4], redis.call('GET', hash .. ':changes') or '' }
  else
    redis.call('SREM', KEYS[1], id)
  end
end
return out
