-- Cancels a running rerun batch: it is fed no more, and its runs not started yet are removed by the
-- caller and by the feeders' next look (src/rerun/track.ts). Returns the state before: only `running`
-- becomes `cancelling`; a batch that ended (done, cancelled) or is cancelling already is left as it is.
-- KEYS: meta. ARGV: now (ms), who.
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'running' then redis.call('HSET', KEYS[1], 'state', 'cancelling', 'cancelledAt', ARGV[1], 'cancelledBy', ARGV[2]) end
return state
