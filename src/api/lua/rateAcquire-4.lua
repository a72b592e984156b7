-- Takes a slot of the shared rate limiter's sliding window.
-- Reads the Redis server's clock (TIME), so processes with skewed clocks agree on the window.
-- The window is a sorted set of slots; a slot's score is the time its request finished, or
-- `acquire + inflight_ms` while it is in flight (so a slow request cannot slide out of the
-- window before the service has seen it). Slots are kept `inflight_ms` past the window so
-- rateObserve can still count them.
-- KEYS: window, pause, quota, cap. ARGV: burst, window_ms, member, inflight_ms.
-- Returns {1, 0, now} granted | {0, wait_ms, now} wait | {-1, pttl, now} paused | {-2, reset_ms, now} quota.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local q = tonumber(redis.call('GET', KEYS[3]) or '')
if q and q > now then return {-2, q, now} end
local p = redis.call('PTTL', KEYS[2])
if p > 0 then return {-1, p, now} end
local window = tonumber(ARGV[2])
local inflight = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window - inflight)
local limit = tonumber(ARGV[1])
local cap = tonumber(redis.call('GET', KEYS[4]) or '')
if cap and cap < limit then limit = cap end
local n = redis.call('ZCOUNT', KEYS[1], '(' .. (now - window), '+inf')
if n < limit then
  redis.call('ZADD', KEYS[1], now + inflight, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window + 2 * inflight)
  return {1, 0, now}
end
local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
local score = tonumber(oldest[2])
if score > now then return {0, 25, now} end
local wait = score + window - now
if wait < 1 then wait = 1 end
return {0, wait, now}
