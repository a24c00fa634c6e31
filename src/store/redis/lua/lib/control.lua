-- Lua: the control state of a conversation from its record key (see controlKey in redis-control.store.ts), for the
-- scripts that must act on it in their own round trip (the intake, a reply's append, a stream's
-- open): `'bot'` and nil when there is no record, else its state and its JSON.
local function control_of(key)
  local r = redis.call('HGET', key, 'r')
  if not r then return 'bot', nil end
  return cjson.decode(r).state, r
end
