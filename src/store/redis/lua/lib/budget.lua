-- The sender's budget (see limits/rate-budgets.ts): the key holds when the bucket is full again (ms,
-- on the Redis clock), expiring then; a message passes while that is at most `tolerance` ms ahead.
local function spend(key, interval, tolerance)
  local due = math.max(now, tonumber(redis.call('GET', key) or now))
  if due - now > tolerance then return false end
  due = due + interval
  redis.call('SET', key, tostring(due), 'PX', math.max(1, math.ceil(due - now)))
  return true
end
