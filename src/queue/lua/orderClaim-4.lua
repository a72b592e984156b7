-- A run of an ordered handler starts: may it run now? (order.ts)
-- KEYS: state hash, done marker of this member, line, pending fan-out (receipt ms → delivery key).
-- ARGV: member, receipt time of this run's delivery (ms), hold_ms.
-- Returns one of
--   {'completed', head_payload}  this run already finished (its worker died between releasing the
--                                key and completing the job): complete it, and add the head's job again;
--   {'run', last}                run now (last: creation time of the last event applied for the key, or '');
--   {'yield', payload, parked}   an event created earlier joined the line before this run started: it
--                                becomes the head (add its job, or promote it when `parked` is '1'), and
--                                this run waits, parked, until it is the head again;
--   {'park'}                     another run holds the key: wait, parked, until released;
--   {'hold', ms}                 a delivery received before this run's (less than hold_ms before)
--                                is still to be fanned out (a worker died in its fan-out, say): it may
--                                be an earlier event of this key, so wait `ms` and ask again, for at
--                                most hold_ms after this run's receipt.
-- A run that is not in the line (retried from the dead-letter queue after its key moved on) runs.
local member = ARGV[1]
local last = redis.call('HGET', KEYS[1], 'last') or ''
local done = redis.call('GET', KEYS[2])
local head = redis.call('HGET', KEYS[1], 'head')
if done == 'completed' then
  local payload = ''
  if head then payload = redis.call('HGET', KEYS[1], 'j:' .. head) or '' end
  return {'completed', payload}
end
if not redis.call('ZSCORE', KEYS[3], member) then return {'run', last} end
local first = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
if head == member or not head then
  if first == member then
    redis.call('HSET', KEYS[1], 'head', member)
    local received = tonumber(ARGV[2])
    local hold = tonumber(ARGV[3])
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    if now - received < hold then
      local before = redis.call('ZRANGEBYSCORE', KEYS[4], received - hold, '(' .. received, 'LIMIT', 0, 1)
      if #before > 0 then return {'hold', 25} end
    end
    return {'run', last}
  end
  redis.call('HSET', KEYS[1], 'head', first, 'p:' .. member, '1')
  local parked = redis.call('HGET', KEYS[1], 'p:' .. first) or ''
  redis.call('HDEL', KEYS[1], 'p:' .. first)
  return {'yield', redis.call('HGET', KEYS[1], 'j:' .. first), parked}
end
redis.call('HSET', KEYS[1], 'p:' .. member, '1')
return {'park'}
