-- A run of an ordered handler starts: may it run now? (order.ts)
-- KEYS: state hash, done marker of this member, line.
-- ARGV: member.
-- Returns one of
--   {'completed', head_payload}  this run already finished (its worker died between releasing the
--                                key and completing the job): complete it, and add the head's job again;
--   {'run', last}                run now (last: creation time of the last event applied for the key, or '');
--   {'yield', payload, parked}   an event created earlier joined the line before this run started: it
--                                becomes the head (add its job, or promote it when `parked` is '1'), and
--                                this run waits, parked, until it is the head again;
--   {'park'}                     another run holds the key: wait, parked, until released.
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
    return {'run', last}
  end
  redis.call('HSET', KEYS[1], 'head', first, 'p:' .. member, '1')
  local parked = redis.call('HGET', KEYS[1], 'p:' .. first) or ''
  redis.call('HDEL', KEYS[1], 'p:' .. first)
  return {'yield', redis.call('HGET', KEYS[1], 'j:' .. first), parked}
end
redis.call('HSET', KEYS[1], 'p:' .. member, '1')
return {'park'}
