-- Lua: the rendezvous pick of relay/rendezvous.ts over runtime members (JSON [replicaId, socketId]):
-- FNV-1a from the seed over the socket id's bytes (ASCII: its UTF-16 code units), then the murmur3
-- finalizer. Lua numbers are doubles: a 32-bit product is built from 16-bit halves to stay exact.
-- A bot's only runtime is picked without scoring; members are read by pattern where they hold no
-- escapes (JSON.stringify of two plain ids), else decoded.
local U32 = 4294967296
local function mul32(a, b)
  local lo = a % 65536
  return (lo * b + ((a - lo) / 65536 * b) % 65536 * 65536) % U32
end
local function xor32(a, b) return bit.bxor(a, b) % U32 end
local function score(seed, id)
  local h = seed
  for i = 1, #id do h = mul32(xor32(h, string.byte(id, i)), 16777619) end
  h = xor32(h, math.floor(h / 65536))
  h = mul32(h, 2246822507)
  h = xor32(h, math.floor(h / 8192))
  h = mul32(h, 3266489909)
  return xor32(h, math.floor(h / 65536))
end
local function runtime_of(member)
  local replica, socket = string.match(member, '^%["([^"\\]*)","([^"\\]*)"%]$')
  if replica then return replica, socket end
  local entry = cjson.decode(member)
  return entry[1], entry[2]
end
local function pick(members, seed)
  if #members == 1 then return 1, runtime_of(members[1]) end
  local best, best_score, best_replica, best_socket = 0, -1, nil, nil
  for i, member in ipairs(members) do
    local replica, socket = runtime_of(member)
    local s = score(seed, socket)
    if s > best_score then best, best_score, best_replica, best_socket = i, s, replica, socket end
  end
  return best, best_replica, best_socket
end
