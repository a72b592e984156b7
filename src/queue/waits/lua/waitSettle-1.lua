-- A resumed run asks how its wait ended: a pending wait whose time came is
-- ended now (`timeout`, a sleep `slept`), in one step with the event script,
-- so an event either answered it before (matched) or finds it over (no late
-- match after the run went on with null).
-- KEYS: state. ARGV: wait id, now ms, key prefix of the on:<key> hashes.
-- Returns the wait's state as JSON, or false when there is none.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local st = cjson.decode(raw)
if st.s == 'pending' and st.due and st.due <= tonumber(ARGV[2]) then
  if st.ev ~= '' then
    st.s = 'timeout'
    redis.call('HDEL', ARGV[3] .. st.k, ARGV[1])
  else
    st.s = 'slept'
  end
  raw = cjson.encode(st)
  redis.call('HSET', KEYS[1], ARGV[1], raw)
end
return raw
