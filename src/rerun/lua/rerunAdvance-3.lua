-- Records one feed of a rerun batch, after its jobs were added (with ids of their own, so a feed
-- repeated after a crash adds nothing): the fed indexes become open, the items that could not be fed
-- end as failed, and `next` moves on. Only from the `next` the feeder read: a second feeder that
-- read the same `next` added the same jobs, and its record is refused.
-- Refused (0) once the batch ended; while it is cancelling the jobs just added are recorded (open), so
-- they are tracked and removed like the others (the feeder feeds no more once it reads `cancelling`).
-- KEYS: meta, open, ended. ARGV: expected next, new next, count of fed indexes, the fed indexes,
-- then pairs (index, reason) of the items not fed.
local meta, open, ended = KEYS[1], KEYS[2], KEYS[3]
local state = redis.call('HGET', meta, 'state')
if state ~= 'running' and state ~= 'cancelling' then return 0 end
if redis.call('HGET', meta, 'next') ~= ARGV[1] then return 0 end
local n = tonumber(ARGV[3])
for i = 4, 3 + n do redis.call('SADD', open, ARGV[i]) end
local failed = 0
for i = 4 + n, #ARGV, 2 do
  if redis.call('HSETNX', ended, ARGV[i], 'failed:' .. ARGV[i + 1]) == 1 then failed = failed + 1 end
end
if failed > 0 then redis.call('HINCRBY', meta, 'failed', failed) end
redis.call('HSET', meta, 'next', ARGV[2])
return 1
