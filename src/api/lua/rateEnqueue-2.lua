-- Registers a waiter of the shared rate limiter that waits behind another waiter of its own
-- process and level (only the first of those polls rateAcquire), so that it keeps its place
-- in the grant order across processes. See rateAcquire-7.lua for the keys' layout.
-- KEYS: waiters, seen. ARGV: member, level, proc, stale_ms.
-- Returns the waiter's score (level * 1e13 + enqueue time on the server clock).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = tonumber(ARGV[2]) * 10000000000000 + now
local keep = 10 * tonumber(ARGV[4]) + 60000
redis.call('ZADD', KEYS[1], 'NX', string.format('%.0f', score), ARGV[1])
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('ZADD', KEYS[2], now, ARGV[3])
redis.call('PEXPIRE', KEYS[2], keep)
return score
