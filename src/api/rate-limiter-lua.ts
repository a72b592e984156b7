/**
 * Lua scripts of the shared rate limiter. Every script reads the Redis server's
 * clock (`TIME`), so processes with skewed clocks still agree on the window.
 * Keys of one token share a hash tag, so the scripts also run on Redis Cluster.
 *
 * The window is a sorted set of slots; a slot's score is the time the request
 * finished, or `acquire + inflight_ms` while it is still in flight (so a slow
 * request cannot slide out of the window before the service has even seen it).
 * Slots are kept `inflight_ms` past the window so `observe` can still count them.
 */

/** KEYS: window, pause, quota, cap. ARGV: burst, window_ms, member, inflight_ms.
 *  Returns {1, 0, now} granted | {0, wait_ms, now} wait | {-1, pttl, now} paused | {-2, reset_ms, now} quota. */
export const ACQUIRE_LUA = `
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
`;

/** KEYS: window. ARGV: member. Moves an in-flight slot to the completion time. */
export const DONE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]) or '')
if s and s > now then redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1]) end
return 1
`;

/** KEYS: window, cap, quota. ARGV: burst, window_ms, server_limit|'', server_remaining|'', acquired_at, phantom_prefix,
 *  quota_remaining|'', quota_reset_ms|''.
 *  Counts as used what the service counted beyond our own slots; lowers the cap to the service's limit. */
export const OBSERVE_LUA = `
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
`;

/** KEYS: pause. ARGV: ms. Extends (never shortens) the shared pause. */
export const PAUSE_LUA = `
local cur = redis.call('PTTL', KEYS[1])
local ms = tonumber(ARGV[1])
if cur < ms then redis.call('SET', KEYS[1], '1', 'PX', ms) end
return 1
`;

/** KEYS: quota. ARGV: reset_ms (epoch). Marks the monthly quota spent until reset. */
export const QUOTA_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reset = tonumber(ARGV[1])
if reset > now then redis.call('SET', KEYS[1], reset, 'PX', reset - now) end
return 1
`;
