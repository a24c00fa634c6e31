-- KEYS: as READ_AFTER. ARGV: before id or '', limit, the log's max entries. Returns both streams'
-- entries newest first.
--#include find
local kept = tonumber(ARGV[3])
local top = '+'
if ARGV[1] ~= '' then
  local sid = find(ARGV[1], KEYS, kept, true)
  if not sid then return { {}, {} } end
  top = '(' .. sid
end
local n = tonumber(ARGV[2]) + 1
-- n entries that are messages (end markers are skipped: pages count messages).
local function page(stream)
  local bottom = oldest_kept(stream, redis.call('XLEN', stream), kept) or '-'
  local out, from = {}, top
  while #out < n do
    local chunk = redis.call('XREVRANGE', stream, from, bottom, 'COUNT', n)
    for _, e in ipairs(chunk) do
      if e[2][1] == 'id' and #out < n then out[#out + 1] = e end
    end
    if #chunk < n then break end
    from = '(' .. chunk[#chunk][1]
  end
  return out
end
return { page(KEYS[1]), page(KEYS[2]) }
