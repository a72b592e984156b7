import { getNextMillis } from 'bullmq';
import { WORKSPACE_ID } from '../config/index.js';
import type { Ability } from '../spec/index.js';
import { closest, parseDuration, PRIORITIES, type Priority } from '../util/index.js';
import type { HandlerContext, NoSettings } from './define.js';
import { HandlerDefinitionError } from './errors.js';
import { formatDuration, type Duration, type RetryOptions, type RetryPolicy } from './options.js';
import { commonOptions } from './common.js';
import type { SettingsOf, SettingsSchema } from './settings.js';

/**
 * What a schedule's run receives: a handler's `ctx` without `debounced`, plus
 * the tick it runs for. `ctx.delivery.key` is `schedule:<id>:<tick ISO>`, so
 * Idempotency-Keys and `ctx.step` results belong to one (schedule, tick).
 */
export interface ScheduleContext<Settings extends object = NoSettings> extends Omit<HandlerContext<Settings>, 'debounced'> {
  /** The instant this run was scheduled for (ISO 8601, UTC). */
  readonly tick: string;
}

/** What `defineSchedule` takes: exactly one of `every` and `cron`. */
export interface ScheduleDefinition<S extends SettingsSchema | undefined = undefined> {
  /** Unique among loaded handlers and schedules; part of the scheduler's id and of Idempotency-Keys, so keep it stable. */
  readonly id: string;
  /** A fixed interval (`'15m'`, or milliseconds; at least 1 s). */
  readonly every?: Duration;
  /** A cron pattern (`'0 9 * * 1-5'`: 5 fields, or 6 with seconds first). */
  readonly cron?: string;
  /** IANA time zone of `cron` (`'Europe/Paris'`); default UTC. */
  readonly timezone?: string;
  readonly abilities?: readonly Ability[];
  /** A zod object schema of the environment variables the schedule reads (as a handler's `settings`). */
  readonly settings?: S;
  /** Attempts and back-off of a failing run (as a handler's `retry`). */
  readonly retry?: RetryOptions;
  /** Longest one run may take. */
  readonly timeout?: Duration;
  /** Priority of its API calls in the shared budget (default normal). */
  readonly priority?: Priority;
  /**
   * The workspaces it runs in (ids of WORKSPACES_FILE); default every workspace of the deployment,
   * each on its own timer. An id the deployment does not serve stops start-up.
   */
  readonly workspaces?: readonly string[];
  handle(ctx: ScheduleContext<SettingsOf<S>>): Promise<void> | void;
}

/** Marker on every schedule; `Symbol.for` so copies of this module loaded twice agree. */
export const SCHEDULE: unique symbol = Symbol.for('switchyard.schedule');

/** A defined schedule: frozen, validated, recognisable by {@link isSchedule}. */
export interface Schedule<Settings extends object = NoSettings> {
  readonly [SCHEDULE]: true;
  readonly id: string;
  /** The interval in milliseconds, or null for a cron schedule. */
  readonly everyMs: number | null;
  readonly cron: string | null;
  /** Time zone of `cron`, or null (UTC). */
  readonly timezone: string | null;
  readonly abilities: readonly Ability[];
  readonly settings: SettingsSchema | null;
  readonly retry: RetryPolicy;
  readonly timeoutMs: number | null;
  readonly priority: Priority;
  /** The workspaces it runs in, or null: every workspace of the deployment. */
  readonly workspaces: readonly string[] | null;
  /** Always returns a promise. */
  handle(ctx: ScheduleContext<Settings>): Promise<void>;
}

const ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
const KEYS = ['id', 'every', 'cron', 'timezone', 'abilities', 'settings', 'retry', 'timeout', 'priority', 'workspaces', 'handle'];
const MIN_EVERY_MS = 1_000;

/** True for a value made by `defineSchedule`. */
export function isSchedule(value: unknown): value is Schedule {
  return typeof value === 'object' && value !== null && (value as { [SCHEDULE]?: unknown })[SCHEDULE] === true;
}

/** True when `tz` is an IANA time zone this runtime knows. */
function knownTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** `every 15m` or `cron 0 9 * * 1-5 (Europe/Paris)`. */
export function describeSchedule(s: Pick<Schedule, 'everyMs' | 'cron' | 'timezone'>): string {
  return s.everyMs !== null ? `every ${formatDuration(s.everyMs)}` : `cron ${s.cron as string} (${s.timezone ?? 'UTC'})`;
}

/**
 * Validates a schedule definition and returns it frozen. Each schedule is one
 * BullMQ job scheduler: one run per tick across every worker process, with the
 * same `ctx` as a handler (api, step, log, settings, signal, delivery). A bad
 * interval, cron pattern or time zone stops start-up naming the schedule and
 * what is expected.
 */
export function defineSchedule<S extends SettingsSchema | undefined = undefined>(def: ScheduleDefinition<S>): Schedule<SettingsOf<S>> {
  const input: unknown = def;
  if (typeof input !== 'object' || input === null)
    throw new HandlerDefinitionError('defineSchedule expects an object { id, every | cron, handle }', null);
  const {
    id,
    every,
    cron,
    timezone,
    abilities = [],
    settings,
    retry,
    timeout,
    priority = 'normal',
    workspaces,
    handle,
  } = input as Record<string, unknown>;
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    throw new HandlerDefinitionError(
      `schedule id ${JSON.stringify(id)} is invalid: use lowercase letters, digits, ".", "_" or "-", starting with a letter or digit`,
      null,
    );
  }
  const fail = (msg: string): never => {
    throw new HandlerDefinitionError(`schedule "${id}": ${msg}`, id);
  };
  for (const [name, value] of Object.entries(input)) {
    if (KEYS.includes(name) || typeof value === 'function') continue;
    const hint = closest(name, KEYS);
    fail(`unknown option "${name}"${hint ? `; did you mean "${hint}"?` : `; expected ${KEYS.join(', ')}`}`);
  }
  if ((every === undefined) === (cron === undefined))
    fail('give exactly one of "every" (an interval such as \'15m\') and "cron" (a pattern such as \'0 9 * * 1-5\')');
  let everyMs: number | null = null;
  if (every !== undefined) {
    everyMs =
      typeof every === 'number' && Number.isFinite(every) ? Math.round(every) : typeof every === 'string' ? parseDuration(every) : null;
    if (everyMs === null || everyMs < MIN_EVERY_MS)
      fail(`"every" must be a duration of at least 1s such as '30s', '15m' or a number of milliseconds, got ${JSON.stringify(every)}`);
    if (timezone !== undefined) fail('"timezone" applies to "cron" only; an "every" interval does not depend on the time zone');
  }
  if (timezone !== undefined && (typeof timezone !== 'string' || !knownTimeZone(timezone))) {
    fail(`"timezone" must be an IANA time zone such as 'Europe/Paris' or 'America/New_York', got ${JSON.stringify(timezone)}`);
  }
  if (cron !== undefined) checkCron(cron, timezone, fail);
  const { retry: policy, timeoutMs: limit } = commonOptions({ abilities, settings, retry, timeout }, fail);
  if (typeof priority !== 'string' || !PRIORITIES.includes(priority as Priority))
    fail(`"priority" must be 'high', 'normal' or 'low', got ${JSON.stringify(priority)}`);
  const only = workspacesOption(workspaces, fail);
  if (typeof handle !== 'function') fail('"handle" must be a function (ctx) => Promise<void>');
  const run = handle as (ctx: ScheduleContext<SettingsOf<S>>) => unknown;
  return Object.freeze({
    [SCHEDULE]: true as const,
    id,
    everyMs,
    cron: (cron as string | undefined) ?? null,
    timezone: (timezone as string | undefined) ?? null,
    abilities: Object.freeze([...new Set(abilities as Ability[])]),
    settings: (settings as SettingsSchema | undefined) ?? null,
    retry: policy,
    timeoutMs: limit,
    priority: priority as Priority,
    workspaces: only,
    async handle(ctx: ScheduleContext<SettingsOf<S>>): Promise<void> {
      await run.call(def, ctx);
    },
  });
}

/** Refuses (`fail`) a cron pattern that is not a string, does not parse or never fires. */
function checkCron(cron: unknown, timezone: unknown, fail: (msg: string) => never): void {
  let problem: string | null = typeof cron === 'string' && cron.trim() !== '' ? null : 'not a non-empty string';
  if (problem === null) {
    try {
      if (getNextMillis(Date.now(), { pattern: cron as string, ...(timezone ? { tz: timezone as string } : {}) }) === undefined)
        problem = 'it never fires';
    } catch (err) {
      problem = (err as Error).message;
    }
  }
  if (problem !== null) {
    const expected = "a cron pattern of 5 fields (minute hour day-of-month month day-of-week, e.g. '0 9 * * 1-5') or 6 with seconds first";
    fail(`"cron" must be ${expected}, got ${JSON.stringify(cron)}: ${problem}`);
  }
}

/** `workspaces` checked: null when not given, else the ids (frozen), each a workspace id and named once. */
function workspacesOption(value: unknown, fail: (msg: string) => never): readonly string[] | null {
  if (value === undefined) return null;
  const expected =
    "a non-empty array of workspace ids (as in WORKSPACES_FILE, e.g. ['acme', 'beta']); leave it out to run in every workspace";
  if (!Array.isArray(value) || value.length === 0) fail(`"workspaces" must be ${expected}, got ${JSON.stringify(value)}`);
  const ids = value as unknown[];
  for (const [i, id] of ids.entries()) {
    if (typeof id !== 'string' || !WORKSPACE_ID.test(id))
      fail(`"workspaces"[${i}] must be a workspace id (lower-case letters, digits and dashes, e.g. 'acme'), got ${JSON.stringify(id)}`);
    if (ids.indexOf(id) !== i) fail(`"workspaces" names "${id}" twice; name each workspace once`);
  }
  return Object.freeze([...(ids as string[])]);
}

/** True when `schedule` runs in workspace `id` (it names no workspaces, or names that one). */
export function runsIn(schedule: Pick<Schedule, 'workspaces'>, id: string): boolean {
  return schedule.workspaces === null || schedule.workspaces.includes(id);
}

/**
 * Every schedule naming a workspace the deployment does not serve (`ids`: its workspaces; `default` only in a
 * deployment of one), as one HandlerDefinitionError naming the schedule, the id and the nearest workspace;
 * nothing when each names served ones. `where` says where the workspaces come from (WORKSPACES_FILE's path).
 */
export function checkScheduleWorkspaces(
  schedules: readonly Pick<Schedule, 'id' | 'workspaces'>[],
  ids: readonly string[],
  where: string,
): void {
  const problems: string[] = [];
  const at = new Set<string>();
  for (const s of schedules) {
    for (const id of s.workspaces ?? []) {
      if (ids.includes(id)) continue;
      const near = closest(id, ids);
      at.add(s.id);
      problems.push(
        `schedule "${s.id}": "workspaces" names "${id}", which is not a workspace of this deployment` +
          `${near ? ` (did you mean "${near}"?)` : ''}; its workspaces (${where}): ${ids.join(', ')}`,
      );
    }
  }
  if (problems.length) throw new HandlerDefinitionError(problems.join('\n'), at.size === 1 ? ([...at][0] as string) : null);
}
