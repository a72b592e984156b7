-- Cancels a parked run (`switchyard waits cancel`, the admin's waits page): in
-- one step, unless a worker holds its job right now (it is running: it woke at
-- this moment), the run's record is marked cancelled (`x`: who), taken off the
-- list of parked runs (`p`, the due set), and its waits and cancelOn entries
-- are forgotten (their state, their registration on their key, a queued
-- wake-up), so no event answers them any more. A worker that takes the job
-- after this step sees the mark and ends the run cancelled before any step
-- (src/worker/hold.ts); the caller removes the job itself (BullMQ) next.
-- KEYS: the run's record, wait state, wake, the due set, the job's BullMQ lock.
-- ARGV: the record's `p` as read by the caller, the mark, key prefix of the
-- on:<key> hashes, the run's scope, how many cancelOn ids to forget
-- (`<scope>:c:<i>`), then the run's wait ids.
-- Returns `cancelled`; `running` (its job is locked by a worker); `gone` (not
-- parked: it ended or was cancelled; a leftover entry in the due set is
-- dropped); `moved` (parked elsewhere than the caller read: read again).
if redis.call('EXISTS', KEYS[5]) == 1 then return 'running' end
local p = redis.call('HGET', KEYS[1], 'p')
if not p then
  redis.call('ZREM', KEYS[4], ARGV[4])
  return 'gone'
end
if p ~= ARGV[1] then return 'moved' end
redis.call('HSET', KEYS[1], 'x', ARGV[2])
redis.call('HDEL', KEYS[1], 'p')
redis.call('ZREM', KEYS[4], ARGV[4])
local function forget(id)
  local raw = redis.call('HGET', KEYS[2], id)
  if raw then
    local st = cjson.decode(raw)
    if st.k and st.k ~= '' then redis.call('HDEL', ARGV[3] .. st.k, id) end
    redis.call('HDEL', KEYS[2], id)
  end
  redis.call('ZREM', KEYS[3], id)
end
for i = 0, tonumber(ARGV[5]) - 1 do forget(ARGV[4] .. ':c:' .. i) end
for i = 6, #ARGV do forget(ARGV[i]) end
return 'cancelled'
