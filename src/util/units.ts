import { parseDateOrTimestamp } from './dates.js';

/** Parsers for the human-friendly units accepted in configuration and CLI flags. */

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** `7d`, `12h`, `30m`, `45s`, `250ms`, `1.5h`; a bare number means seconds. Returns milliseconds or null. */
export function parseDuration(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$/i.exec(text);
  if (!m) return null;
  const unit = (m[2] ?? 's').toLowerCase();
  const ms = Number(m[1]) * (DURATION_UNITS[unit] ?? 1_000);
  return Number.isFinite(ms) ? Math.round(ms) : null;
}

/**
 * A duration as handler options take it: milliseconds (a number) or text (`'15m'`). Null when it is neither, is
 * negative, or is zero where zero is not allowed: the same rule for `0` and `'0s'`.
 */
export function durationOption(value: unknown, allowZero: boolean): number | null {
  const ms =
    typeof value === 'number'
      ? Number.isFinite(value)
        ? Math.round(value)
        : null
      : typeof value === 'string'
        ? parseDuration(value)
        : null;
  return ms !== null && (ms > 0 || (allowZero && ms === 0)) ? ms : null;
}

const FORMAT_UNITS: readonly [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/** `2000` → `2s`, `1022000` → `17m`, `250` → `250ms` (one decimal at most). */
export function formatDuration(ms: number): string {
  for (const [unit, size] of FORMAT_UNITS) if (ms >= size) return `${Math.round((ms / size) * 10) / 10}${unit}`;
  return `${ms}ms`;
}

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, k: 1024, mb: 1024 ** 2, m: 1024 ** 2, gb: 1024 ** 3, g: 1024 ** 3 };

/** `1mb`, `512kb`, `2GB`, `1048576` (bytes; binary multiples). Returns bytes or null. */
export function parseSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb?|mb?|gb?)?\s*$/i.exec(text);
  if (!m) return null;
  const bytes = Number(m[1]) * (SIZE_UNITS[(m[2] ?? 'b').toLowerCase()] ?? 1);
  return Number.isFinite(bytes) ? Math.floor(bytes) : null;
}

const AGE = /^\s*\d+(?:\.\d+)?\s*(ms|s|m|h|d|w)\s*$/i;

/**
 * A `--since`-style time: an age back from `now` (`2h`, `30m`, `7d`), or a
 * date or timestamp read strictly (src/util/dates.ts: a day that exists, a
 * bare date is UTC midnight, a time of day needs `Z` or `±hh:mm`). Epoch ms,
 * or `problem`: what was wrong with it.
 */
export function readSince(text: string, now: number): { readonly ms: number } | { readonly problem: string } {
  if (AGE.test(text)) {
    const ms = parseDuration(text);
    if (ms !== null) return { ms: now - ms };
  }
  const value = text.trim();
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return { problem: `"${text}" is neither an age nor a date` };
  return parseDateOrTimestamp(value);
}

/** `readSince` without the reason: epoch ms, or null. */
export function parseSince(text: string, now: number): number | null {
  const r = readSince(text, now);
  return 'ms' in r ? r.ms : null;
}
