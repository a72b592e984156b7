-- Marks the monthly quota spent until its reset time.
-- KEYS: quota. ARGV: reset_ms (epoch). Returns 1.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reset = tonumber(ARGV[1])
if reset > now then redis.call('SET', KEYS[1], reset, 'PX', reset - now) end
return 1
