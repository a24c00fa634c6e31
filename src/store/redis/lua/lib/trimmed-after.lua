-- Lua prologue of the reads (after LUA_FIND): whether a stream lost (trimmed) an entry newer than
-- stream id `sid`, the log keeping its newest `max`. Nothing is recorded per trimmed entry, so this
-- is told from the stream itself: more than `max` entries were ever added to it (nothing is deleted
-- but by trimming) and its oldest kept entry is newer than `sid`. The second holds when every kept
-- entry came after `sid` and says nothing of the trimmed ones, which may all have been older: the
-- answer errs to "lost", a recovery that could have been whole then reports unknown rather than
-- replaying around a gap.
local function newer(a, b)
  local am, as = string.match(a, '(%d+)-(%d+)'); local bm, bs = string.match(b, '(%d+)-(%d+)')
  am = tonumber(am); bm = tonumber(bm)
  return am > bm or (am == bm and tonumber(as) > tonumber(bs))
end
local function trimmed_after(stream, sid, max)
  if redis.call('EXISTS', stream) == 0 then return false end
  local info = redis.call('XINFO', 'STREAM', stream)
  local field = {}
  for i = 1, #info, 2 do field[info[i]] = info[i + 1] end
  if field['entries-added'] <= max then return false end
  return newer(oldest_kept(stream, field['length'], max) or field['recorded-first-entry-id'], sid)
end
