-- KEYS: the dedupe record, the bot's runtimes, then append's stream, clock and marker, then the
-- sender's budget, then the bot's quota's three, then the conversation's control record (all under
-- the bot's hash tag: one slot). ARGV: record json, record ttl seconds, append's arguments with ''
-- for the json when nothing is to be logged, a shard channel or '', the budget's interval and
-- tolerance (ms) or '' twice, the quota's four, then the handoff or '': seed, this replica's id,
-- channel before and after the replica id, request before and after the socket id, where in
-- `after` the observed mark goes and the mark.
-- Returns a JSON object (IntakeResult in redis-message-intake.ts), fields absent when they do not apply:
--   limited    true: the budget was spent, nothing else done
--   quota      true: the quota had no room for the message (its fresh claim undone, nothing logged or handed off)
--   existing   the earlier record's JSON (a retry)
--   runtimes   the bot's live runtime members (JSON [replicaId, socketId])
--   appended   append's result, when it ran
--   subscribers  the channel's subscribers, when asked
--   picked     the runtime the rendezvous pick chose, its index in runtimes (1-based): the relay's choice too
--   handed     true when the request was published to that runtime's replica, and receivers, its channel's receivers
--   evicted    the clientIds of the conversations the quota dropped to make room
--   control    the conversation's control state ('bot', 'waiting', 'human')
-- (Channels are only given where they live on the same server as the keys: not on a Cluster. The
-- request is published after the append: an append that fails aborts the script before it. A
-- message is appended only with a fresh claim, so its id, stamped for it, is not in the log yet.)
--#include now
--#include quota
--#include append
--#include rendezvous
--#include budget
--#include control
if ARGV[8] ~= '' and not spend(KEYS[6], tonumber(ARGV[8]), tonumber(ARGV[9])) then return cjson.encode({ limited = true, control = 'bot' }) end
local control = control_of(KEYS[10])
local existing = redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX', 'GET')
if existing and cjson.decode(existing).delivered then return cjson.encode({ existing = existing, control = control }) end
local result = { existing = existing or nil, control = control }
if ARGV[7] ~= '' then result.subscribers = redis.call('PUBSUB', 'SHARDNUMSUB', ARGV[7])[2] end
local runtimes = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')
result.runtimes = runtimes
if existing or #runtimes == 0 then return cjson.encode(result) end
if ARGV[4] ~= '' then
  local Q = quota_of(7, 10)
  if not q_reserve(Q, #ARGV[4] + #ARGV[3] + ENTRY_OVERHEAD, Q.member) then
    redis.call('DEL', KEYS[1])
    return cjson.encode({ quota = true, evicted = Q.evicted, control = control })
  end
  result.appended = append(KEYS[3], KEYS[4], KEYS[5], ARGV[3], ARGV[4], ARGV[5], ARGV[6], nil, Q)
  result.evicted = Q.evicted
end
if ARGV[14] == '' then return cjson.encode(result) end
local picked, replica, socket = pick(runtimes, tonumber(ARGV[14]))
result.picked = picked
if replica == ARGV[15] then return cjson.encode(result) end
local after = ARGV[19]
if control == 'human' then
  local at = tonumber(ARGV[20])
  after = string.sub(after, 1, at) .. ARGV[21] .. string.sub(after, at + 1)
end
result.handed = true
result.receivers = redis.call('SPUBLISH', ARGV[16] .. replica .. ARGV[17], ARGV[18] .. cjson.encode(socket) .. after)
return cjson.encode(result)
