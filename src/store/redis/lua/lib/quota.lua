-- Lua: the quota's functions, after `now` (ms). A script builds its `Q` with quota_of from its last
-- three keys and the four arguments from `a` on (see RedisQuota in redis-quota.ts).
local ENTRY_OVERHEAD, STREAM_OVERHEAD = {{QUOTA_ENTRY_OVERHEAD}}, {{QUOTA_STREAM_OVERHEAD}}
local function quota_of(k, a)
  return { sizes = KEYS[k], convs = KEYS[k + 1], streams = KEYS[k + 2], bot = ARGV[a], max_bytes = tonumber(ARGV[a + 1]),
    max_convs = tonumber(ARGV[a + 2]), member = ARGV[a + 3], evicted = {} }
end
local function q_total(Q) return tonumber(redis.call('HGET', Q.sizes, '#') or '0') end
-- Adds n bytes (n < 0: takes them) to field and the total.
local function q_charge(Q, field, n)
  if n == 0 then return end
  redis.call('HINCRBY', Q.sizes, field, n); redis.call('HINCRBY', Q.sizes, '#', n)
end
-- The bytes of the bot's open streams (only asked when the bot is over its quota).
local function q_streams_bytes(Q)
  local ids = redis.call('ZRANGE', Q.streams, 0, -1)
  if #ids == 0 then return 0 end
  for i, id in ipairs(ids) do ids[i] = 's:' .. id end
  local sum = 0
  for _, n in ipairs(redis.call('HMGET', Q.sizes, unpack(ids))) do sum = sum + tonumber(n or '0') end
  return sum
end
local function q_drop(Q, field)
  local n = redis.call('HGET', Q.sizes, field)
  if n then q_charge(Q, field, -tonumber(n)); redis.call('HDEL', Q.sizes, field) end
end
-- Notes that member of zset (a conversation or a stream) lives until ttl ms from now; 1 when it is
-- new. The ledger outlives it by one to two minutes: renewed once a minute, not by every write.
local function q_touch(Q, zset, member, ttl)
  local added = redis.call('ZADD', zset, now + ttl, member)
  if redis.call('PTTL', zset) < ttl + 60000 then
    redis.call('PEXPIRE', zset, ttl + 120000)
    if redis.call('PTTL', Q.sizes) < ttl + 60000 then redis.call('PEXPIRE', Q.sizes, ttl + 120000) end
  end
  return added
end
local function q_forget(Q, zset, prefix, member)
  q_drop(Q, prefix .. member); redis.call('ZREM', zset, member)
end
-- Forgets a few conversations and streams whose keys have expired.
local function q_reclaim(Q)
  for _, c in ipairs(redis.call('ZRANGEBYSCORE', Q.convs, '-inf', now - 3000, 'LIMIT', 0, 32)) do q_forget(Q, Q.convs, 'c:', c) end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', Q.streams, '-inf', now - 3000, 'LIMIT', 0, 32)) do q_forget(Q, Q.streams, 's:', id) end
end
-- Drops conversation c of the bot (its log, finals and feedback), as its expiry would, and lists it in
-- Q.evicted: its user's index of conversations (another slot) is the caller's to update.
local function q_evict(Q, c)
  if c ~= '' then Q.evicted[#Q.evicted + 1] = c end
  if c == '' then redis.call('DEL', Q.bot .. ':broadcasts')
  else redis.call('DEL', Q.bot .. ':log:' .. c, Q.bot .. ':overlay:' .. c, Q.bot .. ':logindexed:' .. c, Q.bot .. ':logidx:' .. c) end
  q_forget(Q, Q.convs, 'c:', c)
end
-- Room for need more bytes, made by dropping the bot's least recently written conversations, never
-- keep (nil: none kept); false when there is not (at most 64 go per call).
local function q_room(Q, need, keep)
  local function over() return q_total(Q) + need > Q.max_bytes end
  if not over() then return true end
  q_reclaim(Q)
  -- What no drop can free (open streams, the conversation kept): refused, nothing dropped.
  local floor = q_streams_bytes(Q)
  if keep then floor = floor + tonumber(redis.call('HGET', Q.sizes, 'c:' .. keep) or '0') end
  if floor + need > Q.max_bytes then return false end
  for _ = 1, 64 do
    if not over() then return true end
    local oldest = redis.call('ZRANGE', Q.convs, 0, 1)
    local c = oldest[1]
    if c == keep then c = oldest[2] end
    if not c then return false end
    q_evict(Q, c)
  end
  return not over()
end
-- Reserves need bytes in the total for a write about to be made, making room as q_room does when they
-- do not fit (the common case: one increment); false when they do not fit: nothing reserved. What is
-- reserved goes to the fields that take it (q_take, q_appended).
local function q_reserve(Q, need, keep)
  if redis.call('HINCRBY', Q.sizes, '#', need) > Q.max_bytes then
    redis.call('HINCRBY', Q.sizes, '#', -need)
    if not q_room(Q, need, keep) then return false end
    redis.call('HINCRBY', Q.sizes, '#', need)
  end
  Q.reserved = (Q.reserved or 0) + need
  return true
end
-- Gives n reserved bytes to field.
local function q_take(Q, field, n)
  redis.call('HINCRBY', Q.sizes, field, n)
  Q.reserved = Q.reserved - n
end
-- Past the bot's most conversations, drops its least recently written ones (never Q.member).
local function q_count(Q)
  if redis.call('ZCARD', Q.convs) <= Q.max_convs then return end
  q_reclaim(Q)
  for _ = 1, 64 do
    if redis.call('ZCARD', Q.convs) <= Q.max_convs then return end
    local oldest = redis.call('ZRANGE', Q.convs, 0, 1)
    local c = oldest[1]
    if c == Q.member then c = oldest[2] end
    if not c then return end
    q_evict(Q, c)
  end
end
-- Counts an entry of n bytes appended to the conversation Q.member, whose stream went from before to
-- after entries (fewer than before + 1: XADD trimmed), living ttl seconds; the part of n reserved is
-- in the total already. A new conversation past the bot's most drops its oldest other one.
local function q_appended(Q, n, before, after, ttl)
  local field = 'c:' .. Q.member
  local charged = n
  if after < before + 1 then
    local held = tonumber(redis.call('HGET', Q.sizes, field) or '0')
    charged = math.floor((held + n) * after / (before + 1)) - held
  end
  local reserved = math.min(Q.reserved or 0, n)
  Q.reserved = (Q.reserved or 0) - reserved
  if charged ~= 0 then redis.call('HINCRBY', Q.sizes, field, charged) end
  if charged ~= reserved then redis.call('HINCRBY', Q.sizes, '#', charged - reserved) end
  if q_touch(Q, Q.convs, Q.member, ttl * 1000) == 1 then q_count(Q) end
end
-- A delta's n bytes to stream id, charged when they fit (the common case: two increments); else room
-- is made as q_room makes it. False when they do not fit: nothing charged.
local function q_delta(Q, id, n)
  if redis.call('HINCRBY', Q.sizes, '#', n) > Q.max_bytes then
    redis.call('HINCRBY', Q.sizes, '#', -n)
    if not q_room(Q, n, Q.member) then return false end
    redis.call('HINCRBY', Q.sizes, '#', n)
  end
  redis.call('HINCRBY', Q.sizes, 's:' .. id, n)
  return true
end
