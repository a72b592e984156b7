-- Extends (never shortens) the rate limiter's shared pause.
-- KEYS: pause. ARGV: ms. Returns 1.
local cur = redis.call('PTTL', KEYS[1])
local ms = tonumber(ARGV[1])
if cur < ms then redis.call('SET', KEYS[1], '1', 'PX', ms) end
return 1
