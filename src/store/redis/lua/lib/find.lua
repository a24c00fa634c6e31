-- Lua: the stream id of message `id` among the newest `max` entries of any of `streams`, or false.
-- Searches from the newest entries of all of them, in chunks of 16, 64, 256 and then 1,024 entries
-- (a bound on what one call holds in the script's memory, whatever HISTORY_MAX_MESSAGES is).
local function find(id, streams, max, messages_only)
  local tops, seen, count = {}, {}, 16
  for i = 1, #streams do tops[i] = '+'; seen[i] = 0 end
  local searching = true
  while searching do
    searching = false
    for i, stream in ipairs(streams) do
      if tops[i] then
        local want = math.min(count, max - seen[i])
        local entries = redis.call('XREVRANGE', stream, tops[i], '-', 'COUNT', want)
        for _, e in ipairs(entries) do
          if e[2][2] == id and (not messages_only or e[2][1] == 'id') then return e[1] end
        end
        seen[i] = seen[i] + #entries
        tops[i] = #entries == want and seen[i] < max and '(' .. entries[#entries][1]
        searching = searching or tops[i] ~= false
      end
    end
    count = math.min(count * 4, 1024)
  end
  return false
end
-- The oldest entry of the newest max of a stream of length entries, or nil when it holds no more.
local function oldest_kept(stream, length, max)
  if length <= max then return nil end
  local oldest = redis.call('XRANGE', stream, '-', '+', 'COUNT', length - max + 1)
  return oldest[#oldest][1]
end
