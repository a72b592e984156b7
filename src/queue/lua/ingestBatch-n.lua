-- Stores a batch of deliveries (group commit): appends every delivery whose dedupe key is not
-- yet claimed to the inbox list, then claims those keys. The append is the first write, so a
-- run that fails has written nothing (see IngestStore). A key repeated inside the batch is a
-- duplicate from its second occurrence on.
-- KEYS[1] inbox, KEYS[1+i] dedupe key of delivery i (so the number of keys varies: `-n`);
-- ARGV[1] ttl ms, ARGV[2i] payload i, ARGV[2i+1] its receivedAt (the dedupe value).
-- Returns one character per delivery: `1` stored, `0` duplicate.
local out, fresh, seen = {}, {}, {}
for i = 1, #KEYS - 1 do
  local key = KEYS[i + 1]
  if seen[key] or redis.call('EXISTS', key) == 1 then
    out[i] = '0'
  else
    seen[key] = true
    fresh[#fresh + 1] = i
    out[i] = '1'
  end
end
for first = 1, #fresh, 500 do
  local payloads = {}
  for j = first, math.min(first + 499, #fresh) do payloads[#payloads + 1] = ARGV[2 * fresh[j]] end
  redis.call('RPUSH', KEYS[1], unpack(payloads))
end
for _, i in ipairs(fresh) do
  redis.call('SET', KEYS[i + 1], ARGV[2 * i + 1], 'PX', ARGV[1])
end
return table.concat(out)
