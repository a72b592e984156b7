import { isEventName, type EventName, type WorkspaceEvent } from '../events/catalogue.js';
import type { Handler, HandlerContext } from '../handler/define.js';
import { HandlerConfigError } from '../handler/errors.js';
import { keyOf, type KeyOption } from '../handler/flow.js';
import type { Duration } from '../handler/options.js';
import type { HandlerState, SleepOptions, WaitForEventOptions, WorkflowContext } from '../handler/workflow.js';
import type { WorkflowPolicy } from '../handler/workflow-policy.js';
import { addBusinessTime } from '../recipes/business-time.js';
import { parseDuration } from '../util/units.js';
import type { TestEventInput, TestWait } from './types.js';

/**
 * The workflow part of `ctx` in testHandler: sleeps and waits on a virtual
 * clock that they move forward at once (no real waiting), `options.events` as
 * the events a wait may see or `cancelOn` may be triggered by, and `ctx.state`
 * in memory; the rules are the worker's (src/worker/durable.ts): lookback,
 * names, which match a wait takes, when `cancelOn` applies. In testSchedule
 * each is refused, as the worker refuses it for schedules.
 */

/** One event the run's waits may see, with when it was received (ms). */
interface Arrival {
  readonly event: WorkspaceEvent;
  readonly at: number;
}

/** The run's own event and when it was received. */
export interface WorkflowRunOwn {
  readonly event: WorkspaceEvent;
  /** The run's own receipt: the clock starts here. */
  readonly receivedAt: number;
}

/** What a workflow run left: its waits, its state, and whether a `cancelOn` event ended it. */
export interface WorkflowRecord {
  readonly waits: TestWait[];
  cancelled: boolean;
  /** The virtual time now (ms): the run's receipt moved forward by its sleeps and waits. */
  clock: number;
  /** The state's value at the end (null: none). */
  state: unknown;
}

/** What a cancelled run's pending sleep or wait returns: a promise that never settles, so no code of the run runs after it. */
const NEVER = new Promise<never>(() => {});

function timeOf(what: string, value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw new TypeError(`${what} must be a Date, an ISO time or ms since the epoch, got ${JSON.stringify(String(value))}`);
  return ms;
}

function durationOf(what: string, value: unknown, allowZero: boolean): number {
  const ms = typeof value === 'number' ? (Number.isFinite(value) ? Math.round(value) : Number.NaN) : typeof value === 'string' ? (parseDuration(value) ?? Number.NaN) : Number.NaN;
  if (!(ms > 0 || (allowZero && ms === 0))) {
    throw new TypeError(`${what} must be a ${allowZero ? '' : 'positive '}duration such as '15m' or a number of milliseconds, got ${JSON.stringify(value)}`);
  }
  return ms;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const isEvent = (v: unknown): v is WorkspaceEvent =>
  typeof v === 'object' && v !== null && isEventName((v as { name?: unknown }).name) && 'data' in v;

/**
 * `options.events` with each one's receipt: `at` (a time), `after` (a
 * duration after the run's own receipt), else 1 ms after the previous one (the
 * first 1 ms after the run's own), so in order, after the run's event.
 */
export function arrivals(events: readonly TestEventInput[] | undefined, start: number, who: string): Arrival[] {
  if (events === undefined) return [];
  if (!Array.isArray(events)) throw new TypeError(`${who}: events must be an array of events (createEvent) or { event, at? , after? }`);
  let last = start;
  return events.map((entry: unknown, i) => {
    let at: number;
    let event: unknown = entry;
    if (!isEvent(entry)) {
      if (typeof entry !== 'object' || entry === null || !isEvent((entry as { event?: unknown }).event)) {
        throw new TypeError(`${who}: events[${i}] must be an event (createEvent) or { event, at?, after? }`);
      }
      const e = entry as { event: WorkspaceEvent; at?: unknown; after?: unknown };
      if (e.at !== undefined && e.after !== undefined) throw new TypeError(`${who}: events[${i}] gives both at and after; give one`);
      event = e.event;
      at = e.at !== undefined ? timeOf(`${who}: events[${i}].at`, e.at)
        : e.after !== undefined ? start + durationOf(`${who}: events[${i}].after`, e.after, true)
          : last + 1;
    } else {
      at = last + 1;
    }
    last = Math.max(last, at);
    return { event: copy(event as WorkspaceEvent), at };
  });
}

interface Deps {
  readonly handlerId: string;
  readonly policy: WorkflowPolicy;
  readonly own: WorkflowRunOwn;
  readonly events: readonly Arrival[];
  /** The seeded state of the run's key (`options.state`); undefined: none. */
  readonly seed: unknown;
  /** The run is cancelled: ends its handler's promise race. */
  readonly onCancel: () => void;
}

/** Whether `candidate` has the run's key under `match` (never when either has none). */
function sameKey(match: KeyOption, own: WorkspaceEvent, candidate: WorkspaceEvent): boolean {
  const mine = keyOf(match, own);
  return mine !== null && keyOf(match, candidate) === mine;
}

/** Builds the virtual workflow context of one run and the record it fills. */
export function virtualWorkflow(deps: Deps): { workflow: WorkflowContext; record: WorkflowRecord } {
  const { own, events, policy } = deps;
  const record: WorkflowRecord = { waits: [], cancelled: false, clock: own.receivedAt, state: null };
  const names = new Set<string>();
  const others = events;

  const begin = (kind: 'sleep' | 'wait', name: unknown): string => {
    if (typeof name !== 'string' || name === '') throw new TypeError(`ctx.${kind === 'sleep' ? 'sleep' : 'waitForEvent'} needs a non-empty name`);
    if (names.has(name)) throw new TypeError(`"${name}" is used by two sleeps or waits in one run: their names must be unique within a handler (and stable: a woken run finds them by name)`);
    names.add(name);
    return name;
  };

  /** The first `cancelOn` event received after the run's own and before `due` (it cancels at its receipt, or at once when it came earlier). */
  const canceller = (due: number): Arrival | null => {
    let first: Arrival | null = null;
    for (const a of others) {
      if (a.at <= own.receivedAt || a.at >= due) continue;
      if (!policy.cancelOn.some((c) => c.event === a.event.name && sameKey(c.match, own.event, a.event))) continue;
      if (first === null || a.at < first.at) first = a;
    }
    return first;
  };

  const cancel = (wait: Omit<TestWait, 'outcome' | 'event'>, by: Arrival): Promise<never> => {
    record.waits.push({ ...wait, outcome: 'cancelled', event: copy(by.event) });
    record.clock = Math.max(record.clock, by.at);
    record.cancelled = true;
    deps.onCancel();
    return NEVER;
  };

  const sleepTo = async (name: string, due: number): Promise<void> => {
    const startedAt = record.clock;
    const wait = { name, kind: 'sleep' as const, startedAt: iso(startedAt), due: iso(due) };
    // A sleep already over does not park the run, so nothing cancels it (as in the worker).
    const by = due > startedAt ? canceller(due) : null;
    if (by) return cancel(wait, by);
    record.clock = Math.max(record.clock, due);
    record.waits.push({ ...wait, outcome: 'slept' });
  };

  const hoursOf = (opts: SleepOptions | undefined, what: string) => {
    if (opts === undefined) return undefined;
    if (typeof opts !== 'object' || opts === null) throw new TypeError(`${what}: options must be { businessHours? }`);
    return opts.businessHours;
  };

  const stateKey = (): string => {
    const st = policy.state;
    if (st === null) {
      throw new HandlerConfigError(`handler "${deps.handlerId}" uses ctx.state but has neither "orderBy" nor "state: { key }": give it one of them`);
    }
    const key = keyOf(st.key, own.event);
    if (key === null) throw new HandlerConfigError(`handler "${deps.handlerId}" uses ctx.state, but its event ${own.event.name} has no state key`);
    return key;
  };
  let value: unknown = deps.seed === undefined ? null : copy(deps.seed);
  let writtenAt = own.receivedAt;
  record.state = value;
  const read = (): unknown => {
    stateKey();
    if (value !== null && policy.state && record.clock - writtenAt > policy.state.ttlMs) value = null;
    return value === null ? null : copy(value);
  };
  const write = (next: unknown): void => {
    value = next === undefined ? null : copy(next);
    writtenAt = record.clock;
    record.state = value;
  };
  const state: HandlerState = {
    async get() {
      return read();
    },
    async set(next) {
      stateKey();
      write(next);
    },
    async update(fn) {
      const next = await fn(read());
      write(next);
      return copy(value);
    },
  };

  const workflow: WorkflowContext = {
    async sleep(name: string, duration: Duration, opts?: SleepOptions): Promise<void> {
      begin('sleep', name);
      const ms = durationOf(`ctx.sleep "${name}": duration`, duration, true);
      const hours = hoursOf(opts, `ctx.sleep "${name}"`);
      const due = hours ? addBusinessTime(hours, new Date(record.clock), ms).getTime() : record.clock + ms;
      return sleepTo(name, due);
    },
    async sleepUntil(name: string, at: Date | string | number, opts?: SleepOptions): Promise<void> {
      begin('sleep', name);
      let due = Math.max(record.clock, timeOf(`ctx.sleepUntil "${name}": at`, at));
      const hours = hoursOf(opts, `ctx.sleepUntil "${name}"`);
      if (hours) due = addBusinessTime(hours, new Date(due), 0).getTime();
      return sleepTo(name, due);
    },
    async waitForEvent<E extends EventName>(name: string, opts: WaitForEventOptions<E>): Promise<WorkspaceEvent<E> | null> {
      begin('wait', name);
      if (typeof opts !== 'object' || opts === null || !isEventName(opts.event)) {
        throw new TypeError(`ctx.waitForEvent "${name}": opts.event must be an event name, got ${JSON.stringify((opts as { event?: unknown } | null)?.event)}`);
      }
      const { event: wanted, match, lookback = true } = opts;
      if (typeof match === 'function') {
        // As the worker: a wait is matched by its key in Redis when a later event is fanned out, where the function is unknown.
        throw new HandlerConfigError(`ctx.waitForEvent("${name}") in handler "${deps.handlerId}": match must be 'conversation' or 'contact' (a function match is not supported for waits yet)`);
      }
      if (match !== 'conversation' && match !== 'contact') {
        throw new TypeError(`ctx.waitForEvent "${name}": opts.match must be 'conversation' or 'contact', got ${JSON.stringify(match)}`);
      }
      if (keyOf(match, own.event) === null) {
        throw new HandlerConfigError(`ctx.waitForEvent("${name}") in handler "${deps.handlerId}": the run's event (${own.event.name}) has no ${match} id to match on`);
      }
      const timeoutMs = durationOf(`ctx.waitForEvent "${name}": timeout`, opts.timeout, false);
      const startedAt = record.clock;
      const due = startedAt + timeoutMs;
      let from: number;
      if (lookback === true) from = own.receivedAt;
      else if (lookback === false) from = startedAt;
      else from = Math.max(own.receivedAt, startedAt - durationOf(`ctx.waitForEvent "${name}": lookback`, lookback, true));
      // Events received at or after `from` (and after the run's own), before the timeout; the earliest.
      let found: Arrival | null = null;
      for (const a of others) {
        if (a.event.name !== wanted || a.at <= own.receivedAt || a.at < from || a.at >= due) continue;
        if (!sameKey(match, own.event, a.event)) continue;
        if (found === null || a.at < found.at) found = a;
      }
      const wait = { name, kind: 'wait' as const, startedAt: iso(startedAt), due: iso(due) };
      // A wait answered at once (its event came before it began) does not park the run, so nothing cancels it (as
      // in the worker); otherwise a cancelOn event received after the run's own and before the match (or the
      // timeout) cancels the run, winning a tie.
      const parks = found === null || found.at > startedAt;
      const by = parks ? canceller(found ? found.at + 1 : due) : null;
      if (by) return cancel(wait, by);
      if (found === null) {
        record.clock = due;
        record.waits.push({ ...wait, outcome: 'timed_out' });
        return null;
      }
      record.clock = Math.max(record.clock, found.at);
      record.waits.push({ ...wait, outcome: 'matched', event: copy(found.event) });
      return copy(found.event) as WorkspaceEvent<E>;
    },
    get state() {
      return state;
    },
  };
  return { workflow, record };
}

/**
 * The workflow part of a schedule's `ctx`: the worker runs schedules without
 * durable sleeps, waits or state, so each is a HandlerConfigError there (the
 * run is dead at once); so it is in testSchedule, saying why.
 */
export function refusedWorkflow(scheduleId: string): WorkflowContext {
  const refuse = (what: string): never => {
    throw new HandlerConfigError(`${what} in schedule "${scheduleId}": a schedule's run cannot sleep, wait for an event or keep state (the worker runs schedules without them); do it in a handler`);
  };
  return {
    sleep: async () => refuse('ctx.sleep'),
    sleepUntil: async () => refuse('ctx.sleepUntil'),
    waitForEvent: async () => refuse('ctx.waitForEvent'),
    get state(): HandlerState {
      return { get: async () => refuse('ctx.state'), set: async () => refuse('ctx.state'), update: async () => refuse('ctx.state') };
    },
  };
}

/**
 * `handler` with its `ctx` given the virtual workflow members (the worker's
 * own context underneath, its api getter kept lazy). A run cancelled by a
 * `cancelOn` event ends there: its pending sleep or wait never settles and
 * the wrapped `handle` resolves.
 */
export function withVirtualWorkflow<H extends Handler>(
  handler: H,
  make: (onCancel: () => void) => { workflow: WorkflowContext; record: WorkflowRecord | undefined },
): { handler: H; record: () => WorkflowRecord | undefined } {
  let record: WorkflowRecord | undefined;
  const wrapped = {
    ...handler,
    async handle(event: WorkspaceEvent, ctx: HandlerContext) {
      let cancelled!: () => void;
      const ended = new Promise<void>((resolve) => {
        cancelled = resolve;
      });
      const made = make(cancelled);
      record = made.record;
      const { workflow } = made;
      const withWorkflow = Object.create(ctx, Object.getOwnPropertyDescriptors(workflow)) as HandlerContext;
      await Promise.race([handler.handle(event as never, withWorkflow), ended]);
    },
  };
  return { handler: Object.freeze(wrapped), record: () => record };
}
