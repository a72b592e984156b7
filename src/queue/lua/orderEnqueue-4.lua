-- Adds one run of an ordered handler to its key's line (order.ts).
-- KEYS: line (zset of members by the event's creation time; ties by member, which starts with
--       the receipt time), state (hash: head, last, j:<member> = job payload), backlog (zset of
--       the handler's keys by line length), done marker of this member.
-- ARGV: member, score, payload, key.
-- Returns 1 when this run is the head (add its job now), 0 when it waits behind the head,
-- 2 when it already ran or was released (a repeated fan-out: add nothing).
if redis.call('EXISTS', KEYS[4]) == 1 then return 2 end
local member = ARGV[1]
local head = redis.call('HGET', KEYS[2], 'head')
if redis.call('ZSCORE', KEYS[1], member) then
  if head == member then return 1 end
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], member)
redis.call('HSET', KEYS[2], 'j:' .. member, ARGV[3])
redis.call('PERSIST', KEYS[2])
redis.call('ZADD', KEYS[3], redis.call('ZCARD', KEYS[1]), ARGV[4])
if not head then
  redis.call('HSET', KEYS[2], 'head', member)
  return 1
end
return 0
