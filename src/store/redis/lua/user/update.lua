-- KEYS users, emails. ARGV id, patch JSON, new emailKey ('' = email unchanged), updatedAt.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local user = cjson.decode(raw)
local patch = cjson.decode(ARGV[2])
if ARGV[3] ~= '' and ARGV[3] ~= user.emailKey then
  local owner = redis.call('HGET', KEYS[2], ARGV[3])
  if owner and owner ~= ARGV[1] then return 'email' end
  redis.call('HDEL', KEYS[2], user.emailKey)
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
  user.emailKey = ARGV[3]
end
for _, field in ipairs({ 'email', 'name', 'phone' }) do
  if patch[field] ~= nil then user[field] = patch[field] end
end
user.updatedAt = ARGV[4]
local json = cjson.encode(user)
redis.call('HSET', KEYS[1], ARGV[1], json)
return json
