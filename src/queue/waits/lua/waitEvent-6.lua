-- An event of a match key: kept in the key's log for later lookbacks, and
-- matched against the key's pending waits (see waitRegister). A repeat of a
-- delivery already logged changes nothing.
-- KEYS: state, due, on:<key>, log:<key>, body:<key>, wake (zset wait id by ms).
-- ARGV: delivery key, event name, received ms, body, now ms, retention ms.
-- Returns the number of waits this event answered (-1: a repeat).
if redis.call('HEXISTS', KEYS[5], ARGV[1]) == 1 then return -1 end
local at = tonumber(ARGV[3])
redis.call('ZADD', KEYS[4], at, ARGV[1])
redis.call('HSET', KEYS[5], ARGV[1], cjson.encode({ n = ARGV[2], at = at, b = ARGV[4] }))
local horizon = tonumber(ARGV[5]) - tonumber(ARGV[6])
local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. horizon)
for _, dk in ipairs(old) do redis.call('HDEL', KEYS[5], dk) end
if #old > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', '(' .. horizon) end
redis.call('PEXPIRE', KEYS[4], ARGV[6])
redis.call('PEXPIRE', KEYS[5], ARGV[6])
local answered = 0
local on = redis.call('HGETALL', KEYS[3])
for i = 1, #on, 2 do
  local id, ev = on[i], on[i + 1]
  if ev == ARGV[2] then
    local raw = redis.call('HGET', KEYS[1], id)
    local st = raw and cjson.decode(raw)
    if st and st.s == 'pending' and at > st.since then
      redis.call('HSET', KEYS[1], id, cjson.encode({ s = 'matched', k = st.k, ev = ev, d = ARGV[1], at = at, b = ARGV[4], run = st.run }))
      redis.call('HDEL', KEYS[3], id)
      redis.call('ZREM', KEYS[2], id)
      redis.call('ZADD', KEYS[6], ARGV[5], id)
      answered = answered + 1
    elseif not st or st.s ~= 'pending' then
      redis.call('HDEL', KEYS[3], id)
    end
  end
end
return answered
