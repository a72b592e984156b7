-- Stores a batch of deliveries (group commit): claims the dedupe key of each delivery (SET NX, so a
-- key already claimed, or repeated inside the batch, is a duplicate from its second occurrence on),
-- appends the new deliveries to the inbox list, then marks them in the pending fan-out set
-- (accepted, not fanned out yet: src/queue/flow-pending.ts). One command per delivery claims it,
-- no EXISTS before the SET: that call cost Redis about as many instructions as the mark (bench/README,
-- Ingest).
-- A run that fails has written nothing (see IngestStore): a SET NX is the first write, and a script
-- is refused for memory (noeviction) only at its first write; a failed append (a wrong-type inbox
-- key) takes back the claims of this run, and returns the error.
-- KEYS[1] inbox, KEYS[2] pending fan-out set, KEYS[2+i] dedupe key of delivery i (so the number
-- of keys varies: `-n`);
-- ARGV[1] ttl ms, ARGV[2] length of the dedupe keys' prefix (what follows it is the delivery key),
-- ARGV[3i] payload i, ARGV[3i+1] its receivedAt (the dedupe value), ARGV[3i+2] the same in ms.
-- Returns one character per delivery: `1` stored, `0` duplicate.
local cut = tonumber(ARGV[2]) + 1
local out, claimed, payloads, marks = {}, {}, {}, {}
for i = 1, #KEYS - 2 do
  local key = KEYS[i + 2]
  if redis.call('SET', key, ARGV[3 * i + 1], 'NX', 'PX', ARGV[1]) then
    out[i] = '1'
    claimed[#claimed + 1] = key
    payloads[#payloads + 1] = ARGV[3 * i]
    marks[#marks + 1] = ARGV[3 * i + 2]
    marks[#marks + 1] = string.sub(key, cut)
  else
    out[i] = '0'
  end
end
-- In slices: unpack() is bounded by Lua's stack. Only the first can fail (a wrong-type inbox key).
for first = 1, #payloads, 500 do
  local ok, err = pcall(redis.call, 'RPUSH', KEYS[1], unpack(payloads, first, math.min(first + 499, #payloads)))
  if not ok then
    for f = 1, #claimed, 500 do redis.call('DEL', unpack(claimed, f, math.min(f + 499, #claimed))) end
    return redis.error_reply(type(err) == 'table' and err.err or tostring(err))
  end
end
-- NX: a delivery marked before keeps its first time.
for first = 1, #marks, 500 do
  redis.call('ZADD', KEYS[2], 'NX', unpack(marks, first, math.min(first + 499, #marks)))
end
return table.concat(out)
