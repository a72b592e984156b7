-- Takes a slot of the shared rate limiter's sliding window, in priority order.
-- Reads the Redis server's clock (TIME), so processes with skewed clocks agree on the window.
-- The window is a sorted set of slots; a slot's score is the time its request finished, or
-- `acquire + inflight_ms` while it is in flight (so a slow request cannot slide out of the
-- window before the service has seen it). Slots are kept `inflight_ms` past the window so
-- rateObserve can still count them.
--
-- Waiters: every acquire that waits is a member `<proc>:<seq>` of the `waiters` sorted set,
-- scored `level * 1e13 + enqueue_ms` (level 0 high, 1 normal, 2 low), so the set is in grant
-- order: higher level first, FIFO within a level (same millisecond: by member). `seen` scores
-- each process by the last time one of its waiters polled; a process not seen for stale_ms is
-- dead, and its waiters are dropped when they reach the head of their level. A caller that
-- lost its entry (removed as stale while alive) is put back with its original score.
-- A free slot goes to the caller only when it is among the next `free` grants: the highest
-- level with waiters, except that a level passed over `due` grants in a row while it had
-- waiters goes first (`share` holds each level's passed-over count; minimum share, see
-- SHARE_PASSED_OVER in rate-limiter.ts). Otherwise the slot stays for the waiter it belongs
-- to, which polls when a slot frees as every waiter does. Grants below high are paced once the
-- window is a tenth full (see below); `share` also holds their theoretical next time (`tat`).
--
-- KEYS: window, pause, quota, cap, waiters, seen, share.
-- ARGV: burst, window_ms, member, inflight_ms, level, score|'' (first call), proc, stale_ms, due,
--       pace (1: pace grants below high, see below).
-- Returns {status, value, now, score}: {1, 0, ..} granted | {0, wait_ms, ..} wait |
-- {-1, pttl, ..} paused | {-2, reset_ms, ..} quota (the waiter is removed).
local LEVEL = 10000000000000
local function fmt(x) return string.format('%.0f', x) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local member = ARGV[3]
local q = tonumber(redis.call('GET', KEYS[3]) or '')
if q and q > now then
  redis.call('ZREM', KEYS[5], member)
  return {-2, q, now, 0}
end
local level = tonumber(ARGV[5])
local score = tonumber(ARGV[6]) or (level * LEVEL + now)
local stale = tonumber(ARGV[8])
local keep = 10 * stale + 60000
redis.call('ZADD', KEYS[6], now, ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', '(' .. (now - stale))
redis.call('PEXPIRE', KEYS[6], keep)
redis.call('ZADD', KEYS[5], 'NX', fmt(score), member)
redis.call('PEXPIRE', KEYS[5], keep)
local p = redis.call('PTTL', KEYS[2])
if p > 0 then return {-1, p, now, score} end
local window = tonumber(ARGV[2])
local inflight = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window - inflight)
local limit = tonumber(ARGV[1])
local cap = tonumber(redis.call('GET', KEYS[4]) or '')
if cap and cap < limit then limit = cap end
local n = redis.call('ZCOUNT', KEYS[1], '(' .. (now - window), '+inf')

local function waitFor()
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #oldest == 0 then return 25 end
  local s = tonumber(oldest[2])
  if s > now then return 25 end
  local w = s + window - now
  if w < 1 then w = 1 end
  return w
end

if n >= limit then return {0, waitFor(), now, score} end

-- Pacing below high (when asked): once the window is a tenth full, grants to normal and low are
-- spaced window/limit apart on average (GCRA: `share.tat` is the theoretical time of the next
-- such grant; one slot of catch-up allowed), across both levels and every process, so a
-- saturating backlog spends the budget evenly instead of in bursts at each turn of the window,
-- and a slot frees for a high call every window/limit ms. The pace is the budget's own rate: a
-- backlog alone still uses all of it but the one slot kept for high. High is never paced.
local pace = math.floor(window / limit)
local pacing = ARGV[10] == '1' and level > 0
local tat = 0
if pacing then
  tat = tonumber(redis.call('HGET', KEYS[7], 'tat') or '') or 0
  if n * 10 >= limit and tat - now > pace then return {0, tat - pace - now, now, score} end
  -- And one slot of a window of ten or more is kept for high: a customer's call never waits for a turn.
  if limit >= 10 and n >= limit - 1 then return {0, waitFor(), now, score} end
end

-- A slot is free: drop dead waiters at the head of each level, count the waiters.
local count = {}
local budget = 1000
for l = 0, 2 do
  local lo, hi = fmt(l * LEVEL), '(' .. fmt((l + 1) * LEVEL)
  while budget > 0 do
    local head = redis.call('ZRANGEBYSCORE', KEYS[5], lo, hi, 'LIMIT', 0, 1)[1]
    if not head or head == member then break end
    local owner = string.match(head, '^([^:]*)')
    if redis.call('ZSCORE', KEYS[6], owner) then break end
    redis.call('ZREM', KEYS[5], head)
    budget = budget - 1
  end
  count[l + 1] = redis.call('ZCOUNT', KEYS[5], lo, hi)
end
local pos = redis.call('ZRANK', KEYS[5], member)
for l = 1, level do pos = pos - count[l] end

local due = tonumber(ARGV[9])
local passed = redis.call('HMGET', KEYS[7], '0', '1', '2')
for l = 1, 3 do passed[l] = tonumber(passed[l]) or 0 end
local function nextLevel(left, pd)
  for l = 1, 3 do if left[l] > 0 and pd[l] >= due then return l end end
  for l = 1, 3 do if left[l] > 0 then return l end end
  return nil
end
local function afterGrant(pd, g, left)
  local r = {}
  for l = 1, 3 do
    if l == g or left[l] == 0 then r[l] = 0 else r[l] = pd[l] + 1 end
  end
  return r
end

local left = {count[1], count[2], count[3]}
local pd = {passed[1], passed[2], passed[3]}
local mine = false
for k = 1, limit - n do
  local l = nextLevel(left, pd)
  if not l then break end
  if l == level + 1 and count[l] - left[l] == pos then mine = true break end
  left[l] = left[l] - 1
  pd = afterGrant(pd, l, left)
end
if not mine then return {0, waitFor(), now, score} end

redis.call('ZREM', KEYS[5], member)
count[level + 1] = count[level + 1] - 1
local np = afterGrant(passed, level + 1, count)
redis.call('HSET', KEYS[7], '0', np[1], '1', np[2], '2', np[3])
if pacing then redis.call('HSET', KEYS[7], 'tat', math.max(tat, now) + pace) end
redis.call('PEXPIRE', KEYS[7], keep)
redis.call('ZADD', KEYS[1], now + inflight, member)
redis.call('PEXPIRE', KEYS[1], window + 2 * inflight)
return {1, 0, now, score}
