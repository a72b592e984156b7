/**
 * A run that waits for its workspace's API budget holds no worker slot another
 * workspace could use (issue 35, fair share): the limiter of a worker run's
 * client gives the run's slot back to the pool when a permit is not granted
 * quickly, and takes it again (first in its workspace's line) once the permit
 * comes, before the call is sent. The slot is the worker's (src/worker/fair.ts);
 * this module knows it only as {@link PausableSlot}.
 * @module
 */
import type { Permit, RateLimiter } from '../api/index.js';

/** The slot of the run a call is made for. */
export interface PausableSlot {
  /** Gives the slot back while the run waits. */
  pause(): void;
  /** Takes a slot again; resolves once the run holds one. */
  resume(): Promise<void>;
  /** Keeps the slot (pause does nothing) until the returned function is called. */
  pin(): () => void;
}

/**
 * How long an acquire may take before the run gives its slot up. A permit the
 * window has room for is one Redis round trip (EVALSHA: well under 5 ms on a
 * loaded machine); any real wait is a pace step (10 s / burst: 333 ms at the
 * default 30, 25 ms only at a burst of 400) or a full window, i.e. 10× this or
 * more. Giving up and taking back a slot costs two in-process hand-overs, so a
 * threshold this short loses nothing on a granted permit and frees the slot at
 * once on a real wait.
 */
export const SLOT_YIELD_AFTER_MS = 25;

/** `limiter`, whose acquires made for a run with a slot (`slot()`) give it up while they wait past `afterMs`. */
export function slotYieldingLimiter(
  limiter: RateLimiter,
  slot: () => PausableSlot | undefined,
  afterMs: number = SLOT_YIELD_AFTER_MS,
): RateLimiter {
  return {
    async acquire(signal, priority) {
      const run = slot();
      const permit = limiter.acquire(signal, priority);
      if (!run) return permit;
      if (await grantedWithin(permit, afterMs)) return pinnedUntilDone(await permit, run);
      run.pause();
      let granted: Permit;
      try {
        granted = await permit;
      } catch (err) {
        // The call fails (quota spent, aborted), but the run goes on: with its slot.
        await run.resume().catch(() => undefined);
        throw err;
      }
      try {
        await run.resume();
      } catch (err) {
        await granted.done();
        throw err;
      }
      return pinnedUntilDone(granted, run);
    },
    observe: (o) => limiter.observe(o),
    pause: (ms) => limiter.pause(ms),
    exhaustQuota: (at) => limiter.exhaustQuota(at),
  };
}

/**
 * The permit, with the run's slot pinned until its request is done: while one call of the run is in flight past
 * its permit, the handler may go on with another's answer, so another call's wait must not give the slot up.
 */
function pinnedUntilDone(permit: Permit, run: PausableSlot): Permit {
  const unpin = run.pin();
  return {
    waitedMs: permit.waitedMs,
    acquiredAtMs: permit.acquiredAtMs,
    done: () => {
      unpin();
      return permit.done();
    },
  };
}

/** Whether `p` settles within `ms` (a rejection counts: the caller awaits `p` and gets it). */
async function grantedWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      p.then(
        () => true as const,
        () => true as const,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
