-- Ends the waits and sleeps whose time came: a pending wait becomes `timeout`
-- (a sleep `slept`) and is queued to be woken. One that an event answered
-- first is left as it is.
-- KEYS: state, due, wake. ARGV: now ms, at most how many, key prefix of the
-- on:<key> hashes (the same slot: every key of one prefix shares it).
-- Returns the wait ids it ended.
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local ended = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[2], id)
  local raw = redis.call('HGET', KEYS[1], id)
  local st = raw and cjson.decode(raw)
  if st and st.s == 'pending' then
    if st.ev ~= '' then
      st.s = 'timeout'
      redis.call('HDEL', ARGV[3] .. st.k, id)
    else
      st.s = 'slept'
    end
    redis.call('HSET', KEYS[1], id, cjson.encode(st))
    redis.call('ZADD', KEYS[3], ARGV[1], id)
    ended[#ended + 1] = id
  end
end
return ended
