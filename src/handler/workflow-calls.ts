import { EVENT_NAMES, isEventName, suggestEventName, type EventName, type WorkspaceEvent } from '../events/index.js';
import { closest, formatDuration, parseDuration } from '../util/index.js';
import { HandlerConfigError } from './errors.js';
import { KEY_SOURCES, keyOf, type BuiltinKey, type KeyOption } from './run-policy.js';
import type { MatchOption, SleepOptions } from './workflow.js';

/**
 * The one check of what a handler passes to `ctx.sleep`, `ctx.sleepUntil` and
 * `ctx.waitForEvent` (and of a match, which `cancelOn` shares), used by the
 * worker (src/worker/durable.ts) and by the virtual workflow of testHandler and
 * `replay --inline` (src/worker/virtual-workflow.ts), so both refuse the same
 * calls with the same words. A refusal is a HandlerConfigError: the run is
 * dead-lettered on that attempt (retrying the same code cannot help).
 */

/**
 * How far a run's sleeps and waits may reach, from the worker's retention
 * settings: one sleep or wait lasts at most `maxMs` (DEDUPE_TTL), and every one
 * of a run ends within `maxMs` + 1 day of its event's receipt (its steps and
 * record are kept DEDUPE_TTL + 1 day; a run past them would redo its steps).
 */
export interface WorkflowLimits {
  readonly maxMs: number;
}

const DAY_MS = 86_400_000;
/** DEDUPE_TTL's default: the longest sleep or wait unless it is raised. */
export const DEFAULT_MAX_WAIT_MS = 7 * DAY_MS;

/** The limits from DEDUPE_TTL as the environment gives it (`env.DEDUPE_TTL`, default 7d): what the test kit and `replay --inline` apply. */
export function limitsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): WorkflowLimits {
  const raw = env.DEDUPE_TTL;
  const ms = raw && raw.trim() !== '' ? parseDuration(raw) : null;
  return { maxMs: ms !== null && ms > 0 ? ms : DEFAULT_MAX_WAIT_MS };
}

/** Names one call in a message: `ctx.sleep("nap") in handler "nurture"`. */
export const callLabel = (what: string, name: unknown, handlerId: string): string =>
  `${what}(${typeof name === 'string' ? JSON.stringify(name) : ''}) in handler "${handlerId}"`;

const show = (value: unknown): string => {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'bigint') return `${value}n`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
};

const refuse = (label: string, msg: string): never => {
  throw new HandlerConfigError(`${label}: ${msg}`);
};

/** A sleep's or wait's name: a non-empty string. */
export function checkName(label: string, name: unknown): string {
  if (typeof name !== 'string' || name === '') refuse(label, `needs a non-empty name as its first argument, got ${show(name)}`);
  return name as string;
}

/** A sleep's or wait's name reached a second time in one run. */
export function nameTwice(label: string): HandlerConfigError {
  return new HandlerConfigError(
    `${label}: the name is reached twice in one run; ` +
      'sleep and wait names must be unique within a handler (and stable: a woken run finds them by name)',
  );
}

/** A duration (`'15m'`, or milliseconds) in ms; NaN when it is none. */
export const durationValue = (value: unknown): number =>
  typeof value === 'number'
    ? Number.isFinite(value)
      ? Math.round(value)
      : Number.NaN
    : typeof value === 'string'
      ? (parseDuration(value) ?? Number.NaN)
      : Number.NaN;

/** A time (Date, ISO text, ms since the epoch) in ms; NaN when it is none. */
export const timeValue = (value: unknown): number =>
  value instanceof Date ? value.getTime() : typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;

/** A duration (`'15m'`, or milliseconds) in ms. */
export function durationMs(label: string, field: string, value: unknown, allowZero: boolean): number {
  const ms = durationValue(value);
  if (!(ms > 0 || (allowZero && ms === 0))) {
    refuse(
      label,
      `${field} must be a ${allowZero ? '' : 'positive '}duration such as '15m' or a number of milliseconds, got ${show(value)}`,
    );
  }
  return ms;
}

/** A time as `ctx.sleepUntil` takes it (Date, ISO text, ms since the epoch), in ms. */
export function timeMs(label: string, value: unknown): number {
  const ms = timeValue(value);
  if (!Number.isFinite(ms))
    refuse(
      label,
      `the time must be a Date, an ISO 8601 time or ms since the epoch, got ${show(value instanceof Date ? 'Invalid Date' : value)}`,
    );
  return ms;
}

/** A sleep's options: absent, or `{ businessHours? }`. */
export function sleepOptions(label: string, opts: unknown): SleepOptions | undefined {
  if (opts === undefined) return undefined;
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts))
    return refuse(label, `options must be { businessHours? }, got ${show(opts)}`);
  unknownKeys(label, 'options', opts as Record<string, unknown>, ['businessHours']);
  const hours = (opts as SleepOptions).businessHours;
  if (hours !== undefined && (typeof hours !== 'object' || hours === null))
    refuse(label, `businessHours must come from businessHoursSetting() or parseBusinessHours(), got ${show(hours)}`);
  return opts;
}

function unknownKeys(label: string, what: string, value: Readonly<Record<string, unknown>>, allowed: readonly string[]): void {
  const problem = unknownOption(what, value, allowed);
  if (problem !== null) refuse(label, problem);
}

/** `<what> has an unknown option "x"; did you mean "y"? (expected a, b and c)` for the first key of `value` not in `allowed`, or null. */
export function unknownOption(what: string, value: Readonly<Record<string, unknown>>, allowed: readonly string[]): string | null {
  const key = Object.keys(value).find((k) => !allowed.includes(k));
  if (key === undefined) return null;
  const hint = closest(key, allowed);
  const list = allowed.length > 2 ? `${allowed.slice(0, -1).join(', ')} and ${allowed.at(-1)}` : allowed.join(' and ');
  return `${what} has an unknown option "${key}"${hint ? `; did you mean "${hint}"?` : ''} (expected ${list})`;
}

/**
 * A due time checked against the limits: at most `maxMs` from `now`, and within
 * `maxMs` + 1 day of the run's receipt. The message says why and which setting
 * raises it.
 */
export function checkReach(label: string, due: number, now: number, receivedAt: number, limits: WorkflowLimits): void {
  const max = formatDuration(limits.maxMs);
  const why =
    `a run's steps and record, and its delivery's deduplication, are kept for DEDUPE_TTL (${max}) plus a day, ` +
    'so a longer one could run its steps again or be run twice; raise DEDUPE_TTL (and HISTORY_TTL, to keep its trace) to allow longer';
  if (due - now > limits.maxMs) {
    refuse(label, `${formatDuration(due - now)} is longer than the longest sleep or wait, ${max}: ${why}`);
  }
  if (due - receivedAt > limits.maxMs + DAY_MS) {
    const late = `ends ${iso(due)}, ${formatDuration(due - receivedAt)} after the run's event was received`;
    refuse(label, `${late}; a run's sleeps and waits must all end within ${formatDuration(limits.maxMs + DAY_MS)} of it: ${why}`);
  }
}

const iso = (ms: number): string => (Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString() : String(ms));

/** `ctx.waitForEvent`'s options, checked. */
export interface WaitCall<E extends EventName = EventName> {
  readonly event: E;
  readonly match: MatchOption;
  readonly timeoutMs: number;
  /** true: from the run's own receipt; false: from when the wait began; a number: at most that long before it began. */
  readonly lookback: boolean | number;
}

/** Checks `ctx.waitForEvent`'s options (the match against the event waited for and the run's own event). */
export function waitCall<E extends EventName>(
  label: string,
  opts: unknown,
  own: { readonly name: EventName; readonly data: unknown },
): WaitCall<E> {
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts))
    return refuse(label, `needs options { event, match, timeout }, got ${show(opts)}`);
  const o = opts as Record<string, unknown>;
  unknownKeys(label, 'options', o, ['event', 'match', 'timeout', 'lookback']);
  const event = eventName(label, 'event', o.event);
  if (o.match === undefined) refuse(label, `needs a "match": ${MATCH_FORMS}`);
  const fail = (msg: string): never => refuse(label, msg);
  const match = matchOption('match', o.match, [{ event, role: 'the event waited for' }], fail);
  if (ownKey(match, own) === null) {
    const missingKey = typeof match === 'function' ? 'key (the match function gave none)' : `${builtinOf(match)} id`;
    refuse(label, `the run's event (${own.name}) has no ${missingKey} to match on`);
  }
  const timeoutMs = durationMs(label, 'timeout', o.timeout, false);
  const lb = o.lookback ?? true;
  const lookback = typeof lb === 'boolean' ? lb : durationMs(label, 'lookback', lb, true);
  return { event: event as E, match, timeoutMs, lookback };
}

/** An event name option: one of the catalogue's, with a did-you-mean. */
export function eventName(label: string, field: string, value: unknown): EventName {
  if (isEventName(value)) return value;
  const hint = typeof value === 'string' ? suggestEventName(value) : null;
  return refuse(
    label,
    `"${field}" must be an event name, got ${show(value)}` +
      (hint ? `; did you mean "${hint}"?` : `; known events: ${EVENT_NAMES.join(', ')}`),
  );
}

/** How a match may be written, for messages. */
export const MATCH_FORMS = `'conversation', 'contact' or { on: 'conversation' | 'contact', where: (event) => boolean }`;

const isBuiltin = (v: unknown): v is BuiltinKey => v === 'conversation' || v === 'contact';

/** The built-in key a match compares first (null for a bare key function). */
export function builtinOf(match: MatchOption): BuiltinKey | null {
  if (typeof match === 'function') return null;
  return typeof match === 'string' ? match : match.on;
}

/**
 * A match (`cancelOn[i].match`, a wait's `match`; `state.key` takes the key
 * forms only): 'conversation', 'contact', `{ on, where }` (the key first, then
 * the function on events of that key) or a key function (compared with the
 * run's own event's key: every event of the name is tried). A built-in key
 * must be one every event involved carries (KEY_SOURCES), else it could never
 * match. `fail` throws the caller's error.
 */
export function matchOption(
  name: string,
  value: unknown,
  events: readonly { readonly event: EventName; readonly role: string }[],
  fail: (msg: string) => never,
  keyOnly = false,
): MatchOption {
  if (typeof value === 'function') return value as KeyOption;
  let on: unknown = value;
  if (!keyOnly && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    const extra = unknownOption(`"${name}"`, v, ['on', 'where']);
    if (extra !== null) fail(extra);
    if (typeof v.where !== 'function') fail(`"${name}.where" must be a function (event) => boolean, got ${show(v.where)}`);
    on = v.on;
    if (!isBuiltin(on)) fail(`"${name}.on" must be 'conversation' or 'contact', got ${show(on)}${hintOf(on)}`);
  } else if (!isBuiltin(value)) {
    const forms = keyOnly ? `'conversation', 'contact' or a function (event) => key` : MATCH_FORMS;
    return fail(`"${name}" must be ${forms}, got ${show(value)}${hintOf(value)}`);
  }
  const key = on as BuiltinKey;
  const missing = events.filter((e) => KEY_SOURCES[e.event][key] === null);
  if (missing.length > 0) {
    const list = missing.map((e) => `"${e.event}" (${e.role})`).join(', ');
    const carries = missing.length === 1 ? 'that event carries' : 'those events carry';
    fail(
      `"${name}: '${key}'" cannot be used with ${list}: ${carries} no ${key} id, so it could never match; use a function (event) => key`,
    );
  }
  return value === key ? key : Object.freeze({ on: key, where: (value as { where: (e: WorkspaceEvent) => boolean }).where });
}

const hintOf = (value: unknown): string => {
  const hint = typeof value === 'string' ? closest(value, ['conversation', 'contact']) : null;
  return hint ? `; did you mean '${hint}'?` : '';
};

/** The key the run's own event has under a match (`conversation:42`; a key function's value), or null. */
export function ownKey(match: MatchOption, own: { readonly name: EventName; readonly data: unknown }): string | null {
  return keyOf(typeof match === 'object' ? match.on : match, own);
}

/** Whether `candidate` is taken by a match whose run's own key is `mine`: the same key, then `where`'s verdict. */
export function takes(match: MatchOption, mine: string, candidate: WorkspaceEvent): boolean {
  if (keyOf(typeof match === 'object' ? match.on : match, candidate) !== mine) return false;
  return typeof match !== 'object' || Boolean(match.where(candidate));
}
