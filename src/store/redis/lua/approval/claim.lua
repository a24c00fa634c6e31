-- KEYS: the claim, the delivered mark. ARGV: ms. Returns 1 when claimed (not delivered, not claimed by another call).
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('SET', KEYS[1], '1', 'PX', ARGV[1], 'NX') then return 1 end
return 0
