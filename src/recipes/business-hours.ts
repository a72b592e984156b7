/**
 * Business hours such as `Mon-Fri 09:00-17:00 Europe/Berlin` (several ranges
 * separated by `;`, e.g. `Mon-Fri 09:00-17:00; Sat 10:00-14:00 Europe/Berlin`).
 * Times are wall-clock times in the named IANA zone, so DST is handled by Intl.
 */
export interface BusinessHours {
  readonly timeZone: string;
  readonly ranges: readonly { days: ReadonlySet<number>; from: number; to: number }[];
}

const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export class BusinessHoursError extends Error {
  constructor(
    text: string,
    readonly why: string,
  ) {
    super(`BUSINESS_HOURS "${text}": ${why}; ${BUSINESS_HOURS_EXAMPLE}`);
    this.name = 'BusinessHoursError';
  }
}

/** What a business-hours text looks like. */
export const BUSINESS_HOURS_EXAMPLE = 'expected e.g. "Mon-Fri 09:00-17:00 Europe/Berlin"';

function day(text: string, name: string): number {
  const i = DAYS.indexOf(name.slice(0, 3).toLowerCase());
  if (i < 0) throw new BusinessHoursError(text, `unknown day "${name}"`);
  return i;
}

function minutes(text: string, hhmm: string): number {
  const m = /^(\d{1,2}):(\d{2})$/.exec(hhmm);
  if (!m || Number(m[1]) > 24 || Number(m[2]) > 59) throw new BusinessHoursError(text, `bad time "${hhmm}"`);
  return Number(m[1]) * 60 + Number(m[2]);
}

export function parseBusinessHours(text: string): BusinessHours {
  const parts = text.trim().split(/\s+/);
  const last = parts[parts.length - 1] ?? '';
  const timeZone = parts.length > 1 && !/\d:\d\d$/.test(last) ? (parts.pop() as string) : 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone });
  } catch {
    throw new BusinessHoursError(text, `unknown time zone "${timeZone}"`);
  }
  const ranges = parts
    .join(' ')
    .split(';')
    .map((chunk) => chunk.trim())
    .filter(Boolean)
    .map((chunk) => {
      const m = /^([A-Za-z]+)(?:-([A-Za-z]+))?\s+(\d{1,2}:\d{2})-(\d{1,2}:\d{2})$/.exec(chunk);
      if (!m) throw new BusinessHoursError(text, `cannot read "${chunk}"`);
      const first = day(text, m[1] as string);
      const last = m[2] ? day(text, m[2]) : first;
      const days = new Set<number>();
      for (let d = first; ; d = (d + 1) % 7) {
        days.add(d);
        if (d === last) break;
      }
      const from = minutes(text, m[3] as string);
      const to = minutes(text, m[4] as string);
      if (to <= from) throw new BusinessHoursError(text, `"${chunk}" ends before it starts`);
      return { days, from, to };
    });
  if (ranges.length === 0) throw new BusinessHoursError(text, 'no day range given');
  return { timeZone, ranges };
}

/** Weekday (0 = Sunday) and minute of the day at `at`, in the zone. */
function wallClock(hours: BusinessHours, at: Date): { day: number; minute: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: hours.timeZone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return { day: DAYS.indexOf(get('weekday').toLowerCase()), minute: Number(get('hour')) * 60 + Number(get('minute')) };
}

export function isOpen(hours: BusinessHours, at: Date): boolean {
  const { day: d, minute } = wallClock(hours, at);
  return hours.ranges.some((r) => r.days.has(d) && minute >= r.from && minute < r.to);
}

/**
 * Start of the closed period `at` falls in: the last open minute before it
 * plus one minute (to the minute). Identifies "this closed period" so an away
 * message is sent once per period. Null when `at` is within business hours.
 */
export function closedPeriodStart(hours: BusinessHours, at: Date): Date | null {
  if (isOpen(hours, at)) return null;
  const minute = 60_000;
  // Coarse walk back by 15 minutes to the last open instant, then refine by the minute.
  let t = Math.floor(at.getTime() / minute) * minute;
  for (let i = 0; i < 8 * 24 * 4; i++) {
    const prev = t - 15 * minute;
    if (isOpen(hours, new Date(prev))) {
      while (!isOpen(hours, new Date(t - minute))) t -= minute;
      return new Date(t);
    }
    t = prev;
  }
  return new Date(0); // never open within a week: one long period
}
