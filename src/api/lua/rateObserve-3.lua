-- Counts as used what the service counted beyond our own slots (phantom slots); lowers the
-- cap to the service's limit; marks the monthly quota spent when the service says so.
-- KEYS: window, cap, quota.
-- ARGV: burst, window_ms, server_limit|'', server_remaining|'', acquired_at, phantom_prefix,
--       quota_remaining|'', quota_reset_ms|''.
-- Returns the number of phantom slots added.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local sl = tonumber(ARGV[3])
if sl and sl > 0 and sl < limit then
  redis.call('SET', KEYS[2], sl, 'PX', 600000)
  limit = sl
end
local qr = tonumber(ARGV[7])
local qreset = tonumber(ARGV[8])
if qr == 0 and qreset and qreset > now then
  redis.call('SET', KEYS[3], qreset, 'PX', qreset - now)
end
local rem = tonumber(ARGV[4])
if not rem then return 0 end
local ours = redis.call('ZCOUNT', KEYS[1], '(' .. (tonumber(ARGV[5]) - tonumber(ARGV[2])), '+inf')
local extra = (limit - rem) - ours
if extra > limit then extra = limit end
for i = 1, extra do
  redis.call('ZADD', KEYS[1], now, ARGV[6] .. ':' .. i)
end
if extra > 0 then return extra end
return 0
