-- The kept bodies of one page of deliveries that can match a content query (src/history/list.ts), in one command,
-- so the client neither reads every summary nor sends a command per delivery.
-- KEYS: pairs, per delivery: its summary (hash), its kept body (string).
-- ARGV: conversation ('' = any), contact ('' = any), then the event names that can match (none = any).
-- Returns, per delivery in order: false when it cannot match (no summary: expired; dead-lettered as invalid; another
-- event, conversation or contact), 0 when it could but no body is kept, else the kept body.
local events = {}
local any = #ARGV < 3
for i = 3, #ARGV do events[ARGV[i]] = true end
local out = {}
for i = 1, #KEYS, 2 do
  local s = redis.call('HMGET', KEYS[i], 'event', 'state', 'conversation', 'contact')
  local ok = s[1] and s[2] ~= 'invalid' and (any or events[s[1]])
    and (ARGV[1] == '' or s[3] == ARGV[1]) and (ARGV[2] == '' or s[4] == ARGV[2])
  if not ok then
    out[#out + 1] = false
  else
    out[#out + 1] = redis.call('GET', KEYS[i + 1]) or 0
  end
end
return out
