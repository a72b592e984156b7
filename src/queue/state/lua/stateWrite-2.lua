-- Writes a handler's state for one key and lets go of its writer's lock, if
-- the caller still holds the lock (a writer whose lease ran out writes nothing).
-- KEYS: the state hash {v = version, j = JSON value}, its lock.
-- ARGV: the lock token, the new JSON value ('' to write nothing), ttl ms.
-- Returns the new version (the unchanged one when nothing was written), or -1 when the lock was lost.
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return -1 end
redis.call('DEL', KEYS[2])
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if ARGV[2] == '' then return v end
redis.call('HSET', KEYS[1], 'v', v + 1, 'j', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return v + 1
