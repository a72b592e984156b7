-- Registers a durable wait (or a run's cancelOn entry), or answers it at once
-- from the key's recent events (the lookback): the check of the log and the
-- registration are one step, and waitEvent appends to the same log and reads
-- the same registrations in one step, so an event is seen either by the
-- registration or by the event's own script, never by neither (no missed
-- match) and never by both (no double wake). The event name becomes watched
-- (`names`): from now on its deliveries are logged.
-- KEYS: state (hash wait id -> JSON), on:<key> (hash wait id -> event name),
-- log:<key> (zset delivery key by received ms), body:<key> (hash delivery key ->
-- JSON {n, at, b}), names (hash event name -> 1).
-- A state keeps who to wake as `run`, or, when that is `<queue>|<the id up to
-- its first ':'>` (a run's waits are `<job id>:w:<name>`), as `q` = the queue
-- alone (waitEvent and wait-store.ts put it back together).
-- ARGV: wait id, event name ('' for a sleep), since ms (events received after it
-- match), due ms ('' for none), match key (`any:<event name>`: every event of the name, for a
-- wait whose run compares a key function itself), run (who to wake), cancel ('1': a
-- cancelOn entry: a match makes it `cancelled`).
-- Returns the wait's state as JSON (its existing state when it was registered before).
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then return cur end
local since = tonumber(ARGV[3])
local c = nil
if ARGV[7] == '1' then c = 1 end
local run, q = ARGV[6], nil
local sc = string.match(ARGV[1], '^[^:]*')
local bar = #run - #sc
if bar > 1 and string.sub(run, bar) == '|' .. sc then q = string.sub(run, 1, bar - 1); run = nil end
if ARGV[2] ~= '' then
  if string.sub(ARGV[5], 1, 4) == 'any:' then redis.call('HSET', KEYS[5], ARGV[2], '2')
  else redis.call('HSETNX', KEYS[5], ARGV[2], '1') end
  local seen = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[3], '+inf')
  for _, dk in ipairs(seen) do
    local rec = redis.call('HGET', KEYS[4], dk)
    if rec then
      local e = cjson.decode(rec)
      if e.n == ARGV[2] and e.at > since then
        local s = 'matched'
        if c then s = 'cancelled' end
        local st = cjson.encode({ s = s, k = ARGV[5], ev = ARGV[2], d = dk, at = e.at, b = e.b, run = run, q = q, c = c })
        redis.call('HSET', KEYS[1], ARGV[1], st)
        return st
      end
    end
  end
end
local st = { s = 'pending', k = ARGV[5], ev = ARGV[2], since = since, run = run, q = q, c = c }
if ARGV[4] ~= '' then st.due = tonumber(ARGV[4]) end
local enc = cjson.encode(st)
redis.call('HSET', KEYS[1], ARGV[1], enc)
if ARGV[2] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) end
return enc
