-- Forgets waits (a run that finished or was cancelled): their state, their
-- registration on their key and their pending wake-up.
-- KEYS: state, wake. ARGV: key prefix of the on:<key> hashes, then wait ids.
-- Returns how many existed.
local n = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  local raw = redis.call('HGET', KEYS[1], id)
  if raw then
    n = n + 1
    local st = cjson.decode(raw)
    if st.k and st.k ~= '' then redis.call('HDEL', ARGV[1] .. st.k, id) end
    redis.call('HDEL', KEYS[1], id)
  end
  redis.call('ZREM', KEYS[2], id)
end
return n
