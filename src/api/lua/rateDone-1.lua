-- Moves an in-flight slot of the rate limiter's window to its completion time.
-- KEYS: window. ARGV: member. Returns 1.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '')
if s and s > now then redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1]) end
return 1
