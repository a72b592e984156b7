-- A run of an ordered handler is over (completed, skipped, or dead-lettered and released):
-- takes it off its key's line and makes the next one the head (order.ts).
-- KEYS: line, state, backlog, done marker of this member.
-- ARGV: member, outcome ('completed' | 'released'), applied creation time ('' when the run
--       applied nothing), key, done_ttl_ms, idle_ttl_ms.
-- Returns {} when no run is to start, else {next_member, next_payload, parked}: add its job, or
-- promote it when `parked` is '1' (it started once and waits parked; see orderClaim).
local member = ARGV[1]
redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[5])
redis.call('ZREM', KEYS[1], member)
redis.call('HDEL', KEYS[2], 'j:' .. member, 'p:' .. member)
local applied = tonumber(ARGV[3])
if applied then
  local last = tonumber(redis.call('HGET', KEYS[2], 'last') or '')
  if not last or applied > last then redis.call('HSET', KEYS[2], 'last', ARGV[3]) end
end
local n = redis.call('ZCARD', KEYS[1])
if n == 0 then redis.call('ZREM', KEYS[3], ARGV[4]) else redis.call('ZADD', KEYS[3], n, ARGV[4]) end
local head = redis.call('HGET', KEYS[2], 'head')
-- A run retried from the dead-letter queue after its key moved on: the head is another run's.
if head and head ~= member then return {} end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
if not nxt then
  redis.call('HDEL', KEYS[2], 'head')
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
  return {}
end
redis.call('HSET', KEYS[2], 'head', nxt)
local parked = redis.call('HGET', KEYS[2], 'p:' .. nxt) or ''
redis.call('HDEL', KEYS[2], 'p:' .. nxt)
return {nxt, redis.call('HGET', KEYS[2], 'j:' .. nxt), parked}
