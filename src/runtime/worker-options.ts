import type { Config } from '../config/index.js';

/**
 * A crashed worker's active job counts as stalled once its lock lapses, then runs again.
 * BullMQ moves a job back only when one stalled check marked it (no lock renewal since)
 * and a later check finds its lock gone, and a check is skipped while the previous one's
 * `stalled-check` key (which lives exactly one interval) is still there: the restarted
 * worker's first tick meets the dead worker's key, and about every other tick meets its
 * own (measured: ~1 in 2 at 200 ms, 1 in 6 at 2 s). Performed checks are therefore up to
 * two intervals apart. With the interval equal to the lock (30 s) and a restart 6 s after
 * the kill, an orphaned job ran again 66 s or 96 s after it; a quarter of the lock keeps it
 * within {@link orphanRecoveryBoundMs}.
 */
export function stalledIntervalMs(lockMs: number): number {
  return Math.max(1, Math.floor(lockMs / 4));
}

/**
 * Longest an orphaned job (its worker killed) waits before it runs again, for a worker
 * restarted (or still running elsewhere) within a lock duration: the dead worker's lock
 * lapses within `lockMs` of its last renewal, and a performed stalled check follows within
 * two intervals. 45 s for the default 30 s lock.
 */
export function orphanRecoveryBoundMs(lockMs: number): number {
  return lockMs + 2 * stalledIntervalMs(lockMs);
}

/** The BullMQ worker options both queues share (concurrency, locks, stalled checks). */
export function workerOptions(config: Config) {
  return {
    concurrency: config.workerConcurrency,
    lockDuration: config.jobLockMs,
    stalledInterval: stalledIntervalMs(config.jobLockMs),
    maxStalledCount: 5,
  };
}
