/**
 * The one strict reading of dates and timestamps, shared by the API client
 * (the `date` fields such as `close_date`, timestamps such as `due_at` and
 * `snoozed_until`, and the query bounds `created_after`, `created_before`,
 * `updated_after`, `since`, `due_before`, which take either) and the CLI
 * (`--since`, `--until`; src/util/units.ts parseSince). `Date.parse` is no
 * check: it rolls `2026-02-30` over to 2 March and reads free text and a time
 * without an offset as local time, so each part is checked here against the
 * calendar, and a problem is described in words (`2026-02-30: February 2026
 * has 28 days`). The rule: a date `YYYY-MM-DD` on a day that exists (read as
 * that day's UTC midnight), or a timestamp `YYYY-MM-DDThh:mm:ss[.fff]` ending
 * in `Z` or `±hh:mm`; nothing else.
 */

/** What a `date` field takes. */
export const DATE_FORM = 'a calendar date YYYY-MM-DD';
/** What a timestamp takes. */
export const TIMESTAMP_FORM = 'an ISO 8601 timestamp YYYY-MM-DDThh:mm:ss ending in Z or ±hh:mm, e.g. 2031-02-01T09:30:00Z';
/** What a query bound takes. */
export const DATE_OR_TIMESTAMP_FORM = 'a calendar date YYYY-MM-DD or an ISO 8601 timestamp with an offset, e.g. 2031-02-01T09:30:00Z';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;
/** The same without the offset, to tell a local time apart from other text. */
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?$/;

const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Days in month `m` (1–12) of year `y`. */
function daysIn(y: number, m: number): number {
  return m === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** Why year-month-day is no calendar day, or null when it is one. */
function calendarProblem(y: number, m: number, d: number): string | null {
  if (m < 1 || m > 12) return `there is no month ${m}`;
  if (d < 1 || d > daysIn(y, m)) return `${MONTHS[m - 1]} ${y} has ${daysIn(y, m)} days`;
  return null;
}

/** Why `value` is not a calendar date `YYYY-MM-DD` (the value quoted), or null when it is one. */
export function dateProblem(value: string): string | null {
  const m = DATE.exec(value);
  if (!m) return `"${value}" is not written YYYY-MM-DD`;
  const why = calendarProblem(Number(m[1]), Number(m[2]), Number(m[3]));
  return why ? `"${value}" does not exist: ${why}` : null;
}

/** Why `value` is not an ISO 8601 timestamp with an offset on a real day and time, or null when it is one. */
export function timestampProblem(value: string): string | null {
  const m = TIMESTAMP.exec(value);
  if (!m)
    return LOCAL_TIME.test(value)
      ? `"${value}" has no offset`
      : `"${value}" is not written YYYY-MM-DDThh:mm:ss with Z or ±hh:mm (seconds included)`;
  const [y, mo, d, h, mi, s, oh, om] = m.slice(1).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const day = calendarProblem(y, mo, d);
  if (day) return `"${value}" does not exist: ${day}`;
  if (h > 23) return `"${value}" does not exist: there is no hour ${h}`;
  if (mi > 59 || s > 59) return `"${value}" does not exist: minutes and seconds run 00 to 59`;
  if (oh > 23 || om > 59) return `"${value}" has no valid offset: ±hh:mm runs to 23:59`;
  return null;
}

/** Why `value` is neither a calendar date nor a timestamp, or null when it is one of them. */
export function dateOrTimestampProblem(value: string): string | null {
  return value.includes('T') ? timestampProblem(value) : dateProblem(value);
}

/** A date (UTC midnight) or a timestamp as epoch ms, or why it is neither (`problem`, the value quoted). */
export function parseDateOrTimestamp(value: string): { readonly ms: number } | { readonly problem: string } {
  const problem = dateOrTimestampProblem(value);
  if (problem) return { problem };
  // Checked part by part above: Date.parse now reads exactly what the text says (a bare date is UTC midnight).
  return { ms: Date.parse(value) };
}
