-- Folds one event into its key's open burst of a debounced handler, or opens a burst (debounce.ts).
-- KEYS: burst state (hash: job, first, count, latest, at, due), seen marker of this delivery.
-- ARGV: payload (the event's job data), event creation time (ms), wait_ms, max_wait_ms,
--       job id prefix, seen_ttl_ms.
-- Uses the Redis server's clock (TIME) so every process agrees on the burst's times.
-- Returns {1, job_id, delay_ms} a new burst (add its delayed job), {0, job_id, delay_ms} folded in,
-- {2, '', 0} this delivery was folded in before (a repeated fan-out).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if not redis.call('SET', KEYS[2], 1, 'NX', 'PX', ARGV[6]) then return {2, '', 0} end
local wait = tonumber(ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 0 then
  local job = ARGV[5] .. now
  redis.call('HSET', KEYS[1], 'job', job, 'first', now, 'count', 1, 'latest', ARGV[1], 'at', ARGV[2], 'due', now + wait)
  return {1, job, wait}
end
redis.call('HINCRBY', KEYS[1], 'count', 1)
if tonumber(ARGV[2]) >= tonumber(redis.call('HGET', KEYS[1], 'at')) then
  redis.call('HSET', KEYS[1], 'latest', ARGV[1], 'at', ARGV[2])
end
local due = now + wait
local cap = tonumber(redis.call('HGET', KEYS[1], 'first')) + tonumber(ARGV[4])
if cap < due then due = cap end
redis.call('HSET', KEYS[1], 'due', due)
return {0, redis.call('HGET', KEYS[1], 'job'), due - now}
