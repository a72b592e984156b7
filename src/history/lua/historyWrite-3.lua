-- One history write of one delivery, in one command: summary fields, the new entries, the time index,
-- the list trimmed to the newest entries, both keys living HISTORY_TTL from now (src/history/writer.ts).
-- KEYS: summary (hash), entries (list), index (zset).
-- ARGV: ttl_ms, max_entries, index_score ('' = not indexed), member (the delivery key),
--       trim_before ('' = no trim of the index), n_set, n_set field/value pairs (HSET),
--       n_setnx, n_setnx field/value pairs (HSETNX: a state already written stays), then the entries (RPUSH).
-- Returns 1.
local ttl = ARGV[1]
local i = 6
local n = tonumber(ARGV[i])
if n > 0 then
  local fv = {}
  for k = 1, 2 * n do fv[k] = ARGV[i + k] end
  redis.call('HSET', KEYS[1], unpack(fv))
end
i = i + 2 * n + 1
n = tonumber(ARGV[i])
for k = 0, n - 1 do
  redis.call('HSETNX', KEYS[1], ARGV[i + 1 + 2 * k], ARGV[i + 2 + 2 * k])
end
i = i + 2 * n + 1
if i <= #ARGV then
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i))
  redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
redis.call('PEXPIRE', KEYS[1], ttl)
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
  if ARGV[5] ~= '' then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5]) end
end
return 1
