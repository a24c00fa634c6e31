-- Lua: appends a message to a stream, trimmed to about `max` entries (whole nodes; the reads keep to
-- the newest `max`). Needs `now`, ms: Redis's clock in the intake, which reads it for presence
-- anyway; the hub's clock in the appends below, which would otherwise spend a tenth of their
-- instructions on TIME. Either is fine: the bot's clock orders the entries whatever a replica's
-- clock says, and stream ids are only ever compared, never read as times. Arguments: stream, the
-- bot's clock, the user-index marker (nil for broadcasts), message id, wire json, max entries, ttl
-- seconds, the entry's first field name (nil: 'id'), and the bot's quota (LUA_QUOTA's Q), which
-- counts the entry (the caller made room for it). Returns 2 when the caller must refresh the user's
-- index of conversations, else 1.
local function append(stream, clock, marker, id, json, max, ttl, field, Q)
  local ms, n = now, 0
  local last = redis.call('GET', clock)
  if last then
    local lm, ln = string.match(last, '(%d+)-(%d+)')
    lm = tonumber(lm)
    if lm >= ms then ms = lm; n = tonumber(ln) + 1 end
  end
  local sid = string.format('%d-%d', ms, n)
  redis.call('SET', clock, sid, 'EX', ttl)
  local before = redis.call('XLEN', stream)
  redis.call('XADD', stream, 'MAXLEN', '~', max, sid, field or 'id', id, 'm', json)
  redis.call('EXPIRE', stream, ttl)
  -- Only a stream past max entries may have been trimmed.
  local after = before + 1
  if after > tonumber(max) then after = redis.call('XLEN', stream) end
  q_appended(Q, #json + #id + ENTRY_OVERHEAD, before, after, ttl)
  if marker and redis.call('EXISTS', marker) == 0 then return 2 end
  return 1
end
