-- What a run of an ordered handler needs to know as it starts (order.ts).
-- KEYS: state hash, done marker of this member.
-- Returns {done, last, head, head_payload}: done is 'completed' when this run already finished
-- (a worker died between releasing its key and completing the job; the head's job must be
-- added again), 'released' or ''; last is the creation time of the last event applied for the
-- key ('' when none).
local done = redis.call('GET', KEYS[2]) or ''
local last = redis.call('HGET', KEYS[1], 'last') or ''
local head = redis.call('HGET', KEYS[1], 'head') or ''
local payload = ''
if head ~= '' then payload = redis.call('HGET', KEYS[1], 'j:' .. head) or '' end
return {done, last, head, payload}
