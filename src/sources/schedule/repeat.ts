import { getNextMillis } from 'bullmq';
import type { Schedule } from '../../handler/index.js';
import type { Repeat } from '../timers.js';

/** The BullMQ repeat options of a schedule: its job scheduler ticks by them. */
export function repeatOptions(s: Pick<Schedule, 'everyMs' | 'cron' | 'timezone'>): Repeat {
  if (s.everyMs !== null) return { every: s.everyMs };
  return { pattern: s.cron as string, ...(s.timezone ? { tz: s.timezone } : {}) };
}

/** When the schedule runs next after `from` (ms since epoch), as BullMQ computes it. */
export function nextRun(s: Pick<Schedule, 'everyMs' | 'cron' | 'timezone'>, from: number): number | null {
  return getNextMillis(from, repeatOptions(s)) ?? null;
}
