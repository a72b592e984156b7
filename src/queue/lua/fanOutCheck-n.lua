-- The checks of deliveries at fan-out, one after the other in one call (src/queue/fan-out-check.ts):
-- for each, the claim of its change key (change.ts), then, when it holds the claim, the durable
-- waits it answers (waits/wait-store.ts). Either part may be left out.
-- ARGV[1]: the number of deliveries; then a section per delivery: its parts ('c', 'w' or 'cw'), the
-- claim's 8 arguments (part 'c'), then the waits' (part 'w').
-- KEYS, per delivery in the same order: the change claim (part 'c'); then the waits' state, wake (zset
-- wait id by ms) and names (hash event name -> '1', or '2' when some wait matches the name with a
-- function) (part 'w').
-- Returns, per delivery: claimed, need, n, then n wait ids and runs: claimed 1 when it holds the
-- claim (or no claim was asked), 0 when another delivery of the same change holds it (then no wait
-- is looked at: a duplicate change answers nothing); need 1 when the event's name is watched but its
-- body and match keys were not sent (call again with them and without the claim), else 0; the waits
-- it answered (woken runs, queued in `wake` until they are resumed), as wait id, run, wait id, run.

-- The change claim (part 'c'). The claim holds `v2|<source>|<at ms>|<delivery key>`; a claim of an
-- older version holds the delivery key alone (read as a reconciled copy when it is an `rc:` key,
-- else as a webhook, of unknown time).
-- Arguments: delivery key, source (webhook, reconcile, poll), at (ms: a webhook's event time, a
-- reconciled copy's observation time; '' when unknown), ttl_ms, repeatable ('1': the key can name a
-- later, new change, e.g. a lead won again), skew_ms (how far an event time may trail an observation
-- of the same change), after (ms, '' when none: a reconciled copy inferred from the snapshot names
-- when the record was last seen in the state before the change, on the API's clock; the change came
-- after it), after_skew_ms (the margin for a webhook's event time against `after`: both on the API's clock).
-- 1 when this delivery holds the claim (now or before), 0 when another delivery of the same change holds it.
local function claim(key, dk, source, at_arg, ttl, repeatable, skew, after, after_skew)
  local mine = 'v2|' .. source .. '|' .. at_arg .. '|' .. dk
  local cur = redis.call('GET', key)
  if not cur then
    redis.call('SET', key, mine, 'PX', ttl)
    return 1
  end
  local src, at, holder = string.match(cur, '^v2|(%a*)|(%d*)|(.*)$')
  if not src then
    src, at, holder = 'webhook', '', cur
    if string.sub(cur, 1, 3) == 'rc:' then src = 'reconcile' end
  end
  if holder == dk then return 1 end
  if repeatable ~= '1' then return 0 end
  -- A reconciled copy of a change seen after `after`: a claim older than that (beyond the skew)
  -- is an earlier change of the same key (a thread assigned to A, to B, to A again).
  if source == 'reconcile' and after ~= '' then
    local margin = tonumber(skew)
    if src == 'webhook' and after_skew ~= '' then margin = tonumber(after_skew) end
    if at ~= '' and tonumber(at) + margin < tonumber(after) then
      redis.call('SET', key, mine, 'PX', ttl)
      return 1
    end
    return 0
  end
  -- Otherwise only a real delivery can be a new change; a reconciled or polled copy never displaces one.
  if source ~= 'webhook' then return 0 end
  if src == 'webhook' then
    -- Two real deliveries with different ids: two changes (a late duplicate keeps its id).
    redis.call('SET', key, mine, 'PX', ttl)
    return 1
  end
  -- Held by a copy that saw the record in this state at `at`: an event after that (beyond
  -- the clock skew) is a change the copy could not have seen; one before it is the same change.
  if at ~= '' and at_arg ~= '' and tonumber(at_arg) > tonumber(at) + tonumber(skew) then
    redis.call('SET', key, mine, 'PX', ttl)
    return 1
  end
  return 0
end

-- The waits part of a section (part 'w'): the event is kept in the log of each of its match keys for
-- later lookbacks, and matched against the waits (and cancelOn registrations) pending on those keys
-- (see waitRegister). A repeat of a delivery already logged changes nothing. With only-watched = '1'
-- the event is looked at only when its name is watched (in `names`: a name some run waited for, or
-- some loaded handler cancels on): for every other delivery this part costs one HGET.
-- Arguments (from ARGV[a]): key prefix (`<prefix>:wait:`), delivery key, event name, received ms, body,
-- now ms, retention ms, only watched ('1' or ''), sent ('1': the body and the match keys are given;
-- '': the caller took the name for unwatched and sent neither), the number of match keys, the keys.
-- A name some wait matches with a function (`names` value '2') is also logged under the key
-- `any:<name>`: such a wait is answered by every event of the name and its run compares keys itself.
local function answer(state, wake, names, a, out)
  local p, dk, name, at = ARGV[a], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3])
  local body, now, retention = ARGV[a + 4], ARGV[a + 5], ARGV[a + 6]
  local mode = redis.call('HGET', names, name)
  if ARGV[a + 7] == '1' and not mode then return end
  if ARGV[a + 8] ~= '1' then
    out[2] = 1
    return
  end
  local keys = {}
  for i = a + 10, a + 9 + tonumber(ARGV[a + 9]) do keys[#keys + 1] = ARGV[i] end
  if mode == '2' then keys[#keys + 1] = 'any:' .. name end
  local horizon = tonumber(now) - tonumber(retention)
  for _, key in ipairs(keys) do
    local log, bodies, on = p .. 'log:' .. key, p .. 'body:' .. key, p .. 'on:' .. key
    if redis.call('HEXISTS', bodies, dk) == 0 then
      redis.call('ZADD', log, at, dk)
      redis.call('HSET', bodies, dk, cjson.encode({ n = name, at = at, b = body }))
      local old = redis.call('ZRANGEBYSCORE', log, '-inf', '(' .. horizon)
      for _, o in ipairs(old) do redis.call('HDEL', bodies, o) end
      if #old > 0 then redis.call('ZREMRANGEBYSCORE', log, '-inf', '(' .. horizon) end
      redis.call('PEXPIRE', log, retention)
      redis.call('PEXPIRE', bodies, retention)
      local pending = redis.call('HGETALL', on)
      for j = 1, #pending, 2 do
        local id, ev = pending[j], pending[j + 1]
        if ev == name then
          local raw = redis.call('HGET', state, id)
          local st = raw and cjson.decode(raw)
          if st and st.s == 'pending' and at > st.since then
            local s = 'matched'
            if st.c == 1 then s = 'cancelled' end
            redis.call('HSET', state, id, cjson.encode({ s = s, k = st.k, ev = ev, d = dk, at = at, b = body, run = st.run, q = st.q, c = st.c }))
            redis.call('HDEL', on, id)
            redis.call('ZADD', wake, now, id)
            out[#out + 1] = id
            -- `q`: the run is `<q>|<the id up to its first ':'>` (see waitRegister).
            out[#out + 1] = st.run or (st.q .. '|' .. string.match(id, '^[^:]*'))
          elseif not st or st.s ~= 'pending' then
            redis.call('HDEL', on, id)
          end
        end
      end
    end
  end
end

local reply, k, a = {}, 1, 2
for _ = 1, tonumber(ARGV[1]) do
  local parts = ARGV[a]
  a = a + 1
  -- {claimed, need, answered wait id, run, ...}
  local out = { 1, 0 }
  if string.find(parts, 'c', 1, true) then
    if claim(KEYS[k], ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7]) == 0 then
      out[1] = 0
    end
    k, a = k + 1, a + 8
  end
  if string.find(parts, 'w', 1, true) then
    if out[1] == 1 then answer(KEYS[k], KEYS[k + 1], KEYS[k + 2], a, out) end
    k, a = k + 3, a + 10 + tonumber(ARGV[a + 9])
  end
  reply[#reply + 1] = out[1]
  reply[#reply + 1] = out[2]
  reply[#reply + 1] = (#out - 2) / 2
  for i = 3, #out do reply[#reply + 1] = out[i] end
end
return reply
