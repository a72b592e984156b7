-- Records how runs of a rerun batch ended, each once: `done`, `failed:<reason>` or `cancelled`, counted
-- in the batch's hash and taken off its open set. When every item was fed (or the batch is cancelling)
-- and none is open, the batch ends (`done`, or `cancelled`) and its keys expire after ARGV[2] ms.
-- KEYS: meta, items, open, ended, running (the set of batches still fed).
-- ARGV: now (ms), keep (ms), batch id, then pairs (index, outcome). Returns the batch's state.
local meta, items, open, ended, running = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
for i = 4, #ARGV, 2 do
  local idx, outcome = ARGV[i], ARGV[i + 1]
  if redis.call('HSETNX', ended, idx, outcome) == 1 then
    local field = outcome
    if string.sub(outcome, 1, 7) == 'failed:' then field = 'failed' end
    redis.call('HINCRBY', meta, field, 1)
  end
  redis.call('SREM', open, idx)
end
local state = redis.call('HGET', meta, 'state')
if state ~= 'running' and state ~= 'cancelling' then return state end
local fed, total = tonumber(redis.call('HGET', meta, 'next')), tonumber(redis.call('HGET', meta, 'total'))
if redis.call('SCARD', open) > 0 or (state == 'running' and fed < total) then return state end
local final = 'done'
if state == 'cancelling' then final = 'cancelled' end
redis.call('HSET', meta, 'state', final, 'endedAt', ARGV[1])
redis.call('SREM', running, ARGV[3])
for _, k in ipairs({ meta, items, open, ended }) do redis.call('PEXPIRE', k, ARGV[2]) end
return final
