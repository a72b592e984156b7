-- A debounced handler's job starts: closes its burst and returns it (debounce.ts). Events that
-- arrive from now on open a new burst.
-- KEYS: burst state, taken burst of this job.
-- ARGV: job id, taken_ttl_ms.
-- Returns {'run', latest, count, first} | {'wait', ms} (the burst was extended: run later) |
-- {'gone'} (no burst of this job: nothing to run).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('EXISTS', KEYS[2]) == 1 then
  local b = redis.call('HMGET', KEYS[2], 'latest', 'count', 'first')
  return {'run', b[1], b[2], b[3]}
end
if redis.call('HGET', KEYS[1], 'job') ~= ARGV[1] then return {'gone'} end
local due = tonumber(redis.call('HGET', KEYS[1], 'due'))
if due > now then return {'wait', due - now} end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
local b = redis.call('HMGET', KEYS[2], 'latest', 'count', 'first')
return {'run', b[1], b[2], b[3]}
