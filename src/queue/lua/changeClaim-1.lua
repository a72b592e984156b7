-- Claims a change key for a delivery at fan-out (change.ts). The claim holds
-- `v2|<source>|<at ms>|<delivery key>`; a claim of an older version holds the
-- delivery key alone (read as a reconciled copy when it is an `rc:` key, else as a
-- webhook, of unknown time).
-- KEYS: the claim.
-- ARGV: delivery key, source (webhook, reconcile, poll), at (ms: a webhook's event
-- time, a reconciled copy's observation time; '' when unknown), ttl_ms,
-- repeatable ('1': the key can name a later, new change, e.g. a lead won again),
-- skew_ms (how far an event time may trail an observation of the same change),
-- after (ms, '' when none: a reconciled copy inferred from the snapshot names when the
-- record was last seen in the state before the change, on the API's clock; the change came after it),
-- after_skew_ms (the margin for a webhook's event time against `after`: both on the API's clock).
-- Returns 1 when this delivery holds the claim (now or before), 0 when another
-- delivery of the same change holds it.
local mine = 'v2|' .. ARGV[2] .. '|' .. ARGV[3] .. '|' .. ARGV[1]
local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('SET', KEYS[1], mine, 'PX', ARGV[4])
  return 1
end
local src, at, holder = string.match(cur, '^v2|(%a*)|(%d*)|(.*)$')
if not src then
  src, at, holder = 'webhook', '', cur
  if string.sub(cur, 1, 3) == 'rc:' then src = 'reconcile' end
end
if holder == ARGV[1] then return 1 end
if ARGV[5] ~= '1' then return 0 end
-- A reconciled copy of a change seen after `after`: a claim older than that (beyond the skew)
-- is an earlier change of the same key (a thread assigned to A, to B, to A again).
if ARGV[2] == 'reconcile' and ARGV[7] ~= nil and ARGV[7] ~= '' then
  local margin = tonumber(ARGV[6])
  if src == 'webhook' and ARGV[8] ~= nil and ARGV[8] ~= '' then margin = tonumber(ARGV[8]) end
  if at ~= '' and tonumber(at) + margin < tonumber(ARGV[7]) then
    redis.call('SET', KEYS[1], mine, 'PX', ARGV[4])
    return 1
  end
  return 0
end
-- Otherwise only a real delivery can be a new change; a reconciled or polled copy never displaces one.
if ARGV[2] ~= 'webhook' then return 0 end
if src == 'webhook' then
  -- Two real deliveries with different ids: two changes (a late duplicate keeps its id).
  redis.call('SET', KEYS[1], mine, 'PX', ARGV[4])
  return 1
end
-- Held by a copy that saw the record in this state at `at`: an event after that (beyond
-- the clock skew) is a change the copy could not have seen; one before it is the same change.
if at ~= '' and ARGV[3] ~= '' and tonumber(ARGV[3]) > tonumber(at) + tonumber(ARGV[6]) then
  redis.call('SET', KEYS[1], mine, 'PX', ARGV[4])
  return 1
end
return 0
