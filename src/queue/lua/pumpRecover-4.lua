-- Hands a dead pump's in-flight items back to the head of the inbox (in order), unless its
-- heartbeat came back. Re-adding them is safe: job ids are derived from delivery keys, so
-- BullMQ ignores a job it already holds.
-- KEYS: its in-flight list, inbox, its heartbeat, the set of pumps. ARGV: its id.
-- Returns the number of items handed back, or -1 when the pump is alive.
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local n = 0
while redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT') do n = n + 1 end
redis.call('SREM', KEYS[4], ARGV[1])
return n
