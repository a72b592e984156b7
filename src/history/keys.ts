/**
 * Where the history of deliveries lives, under the queue prefix (so a
 * `{switchyard}` prefix keeps it in one Cluster slot with the queues):
 *
 *   <prefix>:hist:s:<key>   HASH  summary: receipt (time, size, secret index), queued time, event,
 *                                 conversation and contact ids, `h:<handler>` = the run's latest state,
 *                                 duplicates; what `deliveries` filters on
 *   <prefix>:hist:e:<key>   LIST  entries (JSON): fan-out, attempts (steps, API calls), body
 *   <prefix>:hist:index     ZSET  receivedAt (ms) → key, newest first for `deliveries`; trimmed by HISTORY_TTL
 *   <prefix>:hist:j:<job>   STRING the delivery key of a job whose id does not name it (debounced bursts, schedule runs)
 *   <prefix>:hist:b:<key>   STRING the body exactly as received, compressed (./bodies.ts), for `deliveries --where` and
 *                                 `rerun`; expires KEEP_BODIES after fan-out wrote it (not HISTORY_BODIES's redacted copy,
 *                                 which is an entry of hist:e)
 *
 * A schedule's run for one tick is a delivery here too: key `schedule:<id>:<tick ISO>`, received at the tick.
 *
 * Each per-delivery key expires HISTORY_TTL after its last write (a kept body: KEEP_BODIES, at most HISTORY_TTL).
 */
export function historyKeys(prefix: string) {
  return {
    summary: (key: string) => `${prefix}:hist:s:${key}`,
    entries: (key: string) => `${prefix}:hist:e:${key}`,
    index: `${prefix}:hist:index`,
    job: (jobId: string) => `${prefix}:hist:j:${jobId}`,
    body: (key: string) => `${prefix}:hist:b:${key}`,
    /** Every history key (for SCAN). */
    pattern: `${prefix}:hist:*`,
  };
}

/**
 * The delivery key (and handler) a job id names: `d/<key>` (an `events` job),
 * `d/<key>/<handler>` (a handler job), as `jobIdFor` escapes them; null for
 * anything else (a debounced burst's `b/…` job is looked up instead).
 */
export function parseJobId(ref: string): { key: string; handler: string | null } | null {
  const m = /^d\/([^/]+)(?:\/([^/]+))?$/.exec(ref);
  if (!m) return null;
  const unesc = (s: string): string | null => {
    if (/%(?!25|3A|2F)/i.test(s)) return null;
    return s.replace(/%3A/gi, ':').replace(/%2F/gi, '/').replace(/%25/g, '%');
  };
  const key = unesc(m[1] as string);
  const handler = m[2] === undefined ? null : unesc(m[2]);
  if (key === null || (m[2] !== undefined && handler === null)) return null;
  return { key, handler };
}
