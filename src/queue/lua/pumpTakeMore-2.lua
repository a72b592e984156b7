-- Moves up to ARGV[1] more items from the inbox to this pump's in-flight list, keeping order,
-- and returns the whole in-flight list (one round trip).
-- KEYS: inbox, in-flight list. ARGV: most items to move.
for i = 1, tonumber(ARGV[1]) do
  if not redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT') then break end
end
return redis.call('LRANGE', KEYS[2], 0, -1)
