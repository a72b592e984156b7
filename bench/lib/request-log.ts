// The sandbox's request log harvested by sequence number (it keeps the last 5 000 calls): bench/rerun, bench/fair.
import type { LoggedRequest } from '../../src/sandbox/request-log.js';

/** Every entry of the sandbox's request log, read every 200 ms; `gap()` says entries were dropped before a read. */
export function harvester(list: () => LoggedRequest[]) {
  const seen = new Map<number, LoggedRequest>();
  let last = 0;
  let gap = false;
  const harvest = () => {
    const all = list();
    if (all.length > 0 && (all[0] as LoggedRequest).seq > last + 1 && last > 0) gap = true;
    for (const e of all) if (e.seq > last) seen.set(e.seq, e);
    if (all.length > 0) last = Math.max(last, (all[all.length - 1] as LoggedRequest).seq);
  };
  const timer = setInterval(harvest, 200);
  return {
    harvest,
    entries: () => [...seen.values()],
    gap: () => gap,
    stop: () => clearInterval(timer),
  };
}
