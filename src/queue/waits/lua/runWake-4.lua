-- Wakes a parked run now (`switchyard waits wake`): in one step, unless a
-- worker holds its job right now (it is running: it woke already), the sleep
-- or wait it is parked in is made due now: its `t:<name>` rewritten with the
-- new due time, and a wait still pending ended `timeout` (its registration
-- dropped, so an event arriving after this step no longer answers it: the run
-- gets null, once). A wait an event answered first stays `matched` (the run
-- resumes with that event). The caller then promotes the job (BullMQ).
-- KEYS: the run's record, wait state, the due set, the job's BullMQ lock.
-- ARGV: the record's `p` as read by the caller, the name it is parked in, the
-- new `t:<name>`, the wait's id ('' for a sleep), now ms, key prefix of the
-- on:<key> hashes, the run's scope.
-- Returns `woken` (a sleep), `timeout` (a wait that now returns null),
-- `matched` (answered before), `running`, `gone` (not parked any more), or
-- `moved` (parked elsewhere than the caller read: read again).
if redis.call('EXISTS', KEYS[4]) == 1 then return 'running' end
local p = redis.call('HGET', KEYS[1], 'p')
if not p then return 'gone' end
if p ~= ARGV[1] then return 'moved' end
local out = 'woken'
if ARGV[4] ~= '' then
  local raw = redis.call('HGET', KEYS[2], ARGV[4])
  if not raw then return 'gone' end
  local st = cjson.decode(raw)
  if st.s ~= 'pending' then return st.s end
  st.s = 'timeout'
  st.due = tonumber(ARGV[5])
  if st.k and st.k ~= '' then redis.call('HDEL', ARGV[6] .. st.k, ARGV[4]) end
  redis.call('HSET', KEYS[2], ARGV[4], cjson.encode(st))
  out = 'timeout'
end
redis.call('HSET', KEYS[1], 't:' .. ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[7])
return out
