import type { BusinessHours } from './business-hours.js';

/**
 * Time counted in business hours: when a duration of open time has passed
 * (`addBusinessTime`: "15 business minutes after this message") and how much
 * open time lies between two instants (`businessTimeBetween`). Both walk the
 * open and closed stretches of the week in the hours' zone, a stretch at a
 * time (not minute by minute), so a month away is a few dozen steps; a change
 * of the clocks (DST) inside a stretch is corrected by reading the wall clock
 * again at its computed end.
 */

const MINUTE = 60_000;
const DAY = 86_400_000;
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
/** Stretches walked before giving up: a year of daily openings and closings. */
const MAX_STEPS = 2 * 366 * 4;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Weekday (0 = Sunday) and ms since midnight at `t`, on the zone's wall clock. */
function wall(timeZone: string, t: number): { day: number; ms: number } {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, f);
  }
  let day = 0;
  let ms = t - Math.floor(t / 1000) * 1000;
  for (const p of f.formatToParts(new Date(t))) {
    if (p.type === 'weekday') day = DAYS.indexOf(p.value.toLowerCase());
    else if (p.type === 'hour') ms += Number(p.value) * 3_600_000;
    else if (p.type === 'minute') ms += Number(p.value) * MINUTE;
    else if (p.type === 'second') ms += Number(p.value) * 1000;
  }
  return { day, ms };
}

/** The instant, near `guess`, whose wall clock reads `targetMs` (ms since midnight): corrects a DST shift. */
function settle(timeZone: string, guess: number, targetMs: number): number {
  const off = wall(timeZone, guess).ms - targetMs;
  if (off === 0) return guess;
  // A shift of the clocks between the start and `guess` (at most a few hours either way).
  const shift = (((off % DAY) + DAY + DAY / 2) % DAY) - DAY / 2;
  return guess - shift;
}

/** Whether `t` is open, and until when that holds (the end of the open or closed stretch `t` is in). */
export function stretchAt(hours: BusinessHours, t: number): { open: boolean; until: number } {
  const { day, ms } = wall(hours.timeZone, t);
  // Open: the latest end among the ranges open now (adjacent or overlapping ones are walked on the next step).
  let end = -1;
  for (const r of hours.ranges) if (r.days.has(day) && ms >= r.from * MINUTE && ms < r.to * MINUTE) end = Math.max(end, r.to * MINUTE);
  if (end >= 0) return { open: true, until: Math.max(t + 1, settle(hours.timeZone, t + (end - ms), end % DAY)) };
  // Closed: the nearest opening in the next eight days.
  let delta = Number.POSITIVE_INFINITY;
  let target = 0;
  for (let k = 0; k <= 7; k++) {
    for (const r of hours.ranges) {
      if (!r.days.has((day + k) % 7)) continue;
      const d = k * DAY + r.from * MINUTE - ms;
      if (d > 0 && d < delta) {
        delta = d;
        target = r.from * MINUTE;
      }
    }
  }
  if (!Number.isFinite(delta)) return { open: false, until: Number.POSITIVE_INFINITY };
  return { open: false, until: Math.max(t + 1, settle(hours.timeZone, t + delta, target)) };
}

/**
 * The instant at which `durationMs` of open time has passed since `from`.
 * From a closed time the count starts at the next opening; a duration of 0
 * gives `from` when open, else the next opening.
 */
export function addBusinessTime(hours: BusinessHours, from: Date, durationMs: number): Date {
  if (!Number.isFinite(durationMs) || durationMs < 0)
    throw new RangeError(`addBusinessTime: duration must be a finite number of ms ≥ 0, got ${durationMs}`);
  let t = from.getTime();
  let left = durationMs;
  for (let i = 0; i < MAX_STEPS; i++) {
    const s = stretchAt(hours, t);
    if (!Number.isFinite(s.until)) break;
    if (s.open) {
      if (s.until - t >= left && (left > 0 || s.until > t)) return new Date(t + left);
      left -= s.until - t;
    }
    t = s.until;
  }
  throw new RangeError(`addBusinessTime: no ${durationMs} ms of business hours within a year of ${from.toISOString()}`);
}

/** Open time (ms) between `a` and `b` (0 when `b` is not after `a`). */
export function businessTimeBetween(hours: BusinessHours, a: Date, b: Date): number {
  let t = a.getTime();
  const end = b.getTime();
  let total = 0;
  for (let i = 0; t < end && i < MAX_STEPS * 2; i++) {
    const s = stretchAt(hours, t);
    const stop = Math.min(s.until, end);
    if (s.open) total += stop - t;
    t = stop;
  }
  return total;
}
