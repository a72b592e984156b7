-- Stores a batch of deliveries (group commit): appends every delivery whose dedupe key is not
-- yet claimed to the inbox list, then claims those keys and marks them in the pending fan-out set
-- (accepted, not fanned out yet: src/queue/flow-pending.ts). The append is the first write, so a
-- run that fails has written nothing (see IngestStore). A key repeated inside the batch is a
-- duplicate from its second occurrence on.
-- KEYS[1] inbox, KEYS[2] pending fan-out set, KEYS[2+i] dedupe key of delivery i (so the number
-- of keys varies: `-n`);
-- ARGV[1] ttl ms, ARGV[2] length of the dedupe keys' prefix (what follows it is the delivery key),
-- ARGV[3i] payload i, ARGV[3i+1] its receivedAt (the dedupe value), ARGV[3i+2] the same in ms.
-- Returns one character per delivery: `1` stored, `0` duplicate.
local out, fresh, seen = {}, {}, {}
for i = 1, #KEYS - 2 do
  local key = KEYS[i + 2]
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
  for j = first, math.min(first + 499, #fresh) do payloads[#payloads + 1] = ARGV[3 * fresh[j]] end
  redis.call('RPUSH', KEYS[1], unpack(payloads))
end
local cut = tonumber(ARGV[2]) + 1
for first = 1, #fresh, 250 do
  local marks = {}
  for j = first, math.min(first + 249, #fresh) do
    local i = fresh[j]
    redis.call('SET', KEYS[i + 2], ARGV[3 * i + 1], 'PX', ARGV[1])
    marks[#marks + 1] = ARGV[3 * i + 2]
    marks[#marks + 1] = string.sub(KEYS[i + 2], cut)
  end
  -- NX: a delivery marked before keeps its first time.
  redis.call('ZADD', KEYS[2], 'NX', unpack(marks))
end
return table.concat(out)
