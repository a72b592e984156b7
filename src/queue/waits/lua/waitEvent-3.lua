-- An event: kept in the log of each of its match keys for later lookbacks, and
-- matched against the waits (and cancelOn registrations) pending on those keys
-- (see waitRegister). A repeat of a delivery already logged changes nothing.
-- With ARGV[8] = '1' the event is looked at only when its name is watched (in
-- the `names` hash: a name some run waited for, or some loaded handler cancels
-- on): for every other delivery this script is the whole cost (one HEXISTS).
-- KEYS: state, wake (zset wait id by ms), names (hash event name -> 1).
-- ARGV: key prefix (`<prefix>:wait:`), delivery key, event name, received ms,
-- body, now ms, retention ms, only watched ('1' or ''), then the match keys.
-- Returns {wait id, run, wait id, run, ...} of the waits it answered (woken
-- runs, queued in `wake` until they are resumed).
-- A name some wait matches with a function (`names` value '2') is also logged under the key
-- `any:<name>`: such a wait is answered by every event of the name and its run compares keys itself.
local mode = redis.call('HGET', KEYS[3], ARGV[3])
if ARGV[8] == '1' and not mode then return {} end
local p = ARGV[1]
local keys = {}
for i = 9, #ARGV do keys[#keys + 1] = ARGV[i] end
if mode == '2' then keys[#keys + 1] = 'any:' .. ARGV[3] end
local dk, name, at = ARGV[2], ARGV[3], tonumber(ARGV[4])
local horizon = tonumber(ARGV[6]) - tonumber(ARGV[7])
local woken = {}
for _, key in ipairs(keys) do
  local log, body, on = p .. 'log:' .. key, p .. 'body:' .. key, p .. 'on:' .. key
  if redis.call('HEXISTS', body, dk) == 0 then
    redis.call('ZADD', log, at, dk)
    redis.call('HSET', body, dk, cjson.encode({ n = name, at = at, b = ARGV[5] }))
    local old = redis.call('ZRANGEBYSCORE', log, '-inf', '(' .. horizon)
    for _, o in ipairs(old) do redis.call('HDEL', body, o) end
    if #old > 0 then redis.call('ZREMRANGEBYSCORE', log, '-inf', '(' .. horizon) end
    redis.call('PEXPIRE', log, ARGV[7])
    redis.call('PEXPIRE', body, ARGV[7])
    local pending = redis.call('HGETALL', on)
    for j = 1, #pending, 2 do
      local id, ev = pending[j], pending[j + 1]
      if ev == name then
        local raw = redis.call('HGET', KEYS[1], id)
        local st = raw and cjson.decode(raw)
        if st and st.s == 'pending' and at > st.since then
          local s = 'matched'
          if st.c == 1 then s = 'cancelled' end
          redis.call('HSET', KEYS[1], id, cjson.encode({ s = s, k = st.k, ev = ev, d = dk, at = at, b = ARGV[5], run = st.run, q = st.q, c = st.c }))
          redis.call('HDEL', on, id)
          redis.call('ZADD', KEYS[2], ARGV[6], id)
          woken[#woken + 1] = id
          -- `q`: the run is `<q>|<the id up to its first ':'>` (see waitRegister).
          woken[#woken + 1] = st.run or (st.q .. '|' .. string.match(id, '^[^:]*'))
        elseif not st or st.s ~= 'pending' then
          redis.call('HDEL', on, id)
        end
      end
    end
  end
end
return woken
