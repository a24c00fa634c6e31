-- KEYS: hash, changes. Returns false or { m, client, owner, seq, changes }.
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local m = redis.call('HMGET', KEYS[1], 'm', 'client', 'owner', 'seq')
return { m[1], m[2], m[3], m[4], redis.call('GET', KEYS[2]) or '' }
