-- Lua prologue: `now` in milliseconds from the Redis clock, so replicas with skewed clocks agree.
local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
