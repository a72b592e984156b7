import type { EventName, WorkspaceEvent } from '../events/index.js';
import {
  type Handler,
  type HandlerContext,
  keyOf,
  type Duration,
  type MatchOption,
  type SleepOptions,
  type WaitForEventOptions,
  type WorkflowContext,
  callLabel,
  checkName,
  checkReach,
  durationMs,
  durationValue,
  limitsFromEnv,
  nameTwice,
  ownKey,
  sleepOptions,
  takes,
  timeMs,
  timeValue,
  waitCall,
  type WorkflowLimits,
  type WorkflowPolicy,
} from '../handler/index.js';
import { addBusinessTime } from '../recipes/index.js';
import { jsonCopy, virtualState, type StateAccess, type VirtualStateStore } from './virtual-state.js';

/**
 * The workflow part of `ctx` without Redis, on a virtual clock that sleeps and
 * waits move forward at once (no real waiting): a given list of events is
 * what a wait may see or a `cancelOn` may be triggered by, and `ctx.state` is
 * kept in memory (./virtual-state.ts). The rules are the worker's
 * (./durable.ts): lookback, names, which event a wait takes, when `cancelOn`
 * applies. Used by switchyard/testing's testHandler and by `replay --inline`.
 */

/** One event the run's waits may see, with when it was received (ms). */
export interface Arrival {
  readonly event: WorkspaceEvent;
  readonly at: number;
}

/** The run's own event and when it was received. */
export interface WorkflowRunOwn {
  readonly event: WorkspaceEvent;
  /** The run's own receipt: the clock starts here. */
  readonly receivedAt: number;
}

/** One `ctx.sleep`, `ctx.sleepUntil` or `ctx.waitForEvent` of a run, on its virtual clock. */
export interface VirtualWait {
  /** The name the handler gave it. */
  readonly name: string;
  readonly kind: 'sleep' | 'wait';
  /** When it began (ISO 8601, UTC). */
  readonly startedAt: string;
  /** When it was due to end: the sleep's end (business hours counted), the wait's timeout. */
  readonly due: string;
  /**
   * `slept`: to its end; `matched`: the wait got an event; `timed_out`: the wait returned null; `cancelled`: a `cancelOn`
   * event ended the run.
   */
  readonly outcome: 'slept' | 'matched' | 'timed_out' | 'cancelled';
  /** The event matched (`matched`) or that cancelled the run (`cancelled`). */
  readonly event?: WorkspaceEvent;
}

/**
 * What a run did on its virtual clock, in order: each sleep and wait as it ended (with a wait's event name,
 * and when its `event` was received), each read and write of `ctx.state`.
 */
export type WorkflowEntry =
  | { readonly type: 'wait'; readonly wait: VirtualWait; readonly waitedFor?: EventName; readonly eventAt?: string }
  | { readonly type: 'state'; readonly access: StateAccess };

/** What a workflow run left: its waits, its state, and whether a `cancelOn` event ended it. */
export interface WorkflowRecord {
  readonly waits: VirtualWait[];
  cancelled: boolean;
  /** The virtual time now (ms): the run's receipt moved forward by its sleeps and waits. */
  clock: number;
  /** The state's value for the run's key at the end (null: none). */
  state: unknown;
}

/** What a cancelled run's pending sleep or wait returns: a promise that never settles, so no code of the run runs after it. */
const NEVER = new Promise<never>(() => {});

/** A time as `ctx.sleepUntil` takes it (Date, ISO text, ms), in ms; a TypeError naming `what` otherwise (test kit inputs). */
export function timeOf(what: string, value: unknown): number {
  const ms = timeValue(value);
  if (!Number.isFinite(ms))
    throw new TypeError(`${what} must be a Date, an ISO time or ms since the epoch, got ${JSON.stringify(String(value))}`);
  return ms;
}

/** A duration (`'15m'`, or ms) in ms; a TypeError naming `what` otherwise (test kit inputs). */
export function durationOf(what: string, value: unknown, allowZero: boolean): number {
  const ms = durationValue(value);
  if (!(ms > 0 || (allowZero && ms === 0))) {
    const kind = allowZero ? '' : 'positive ';
    throw new TypeError(`${what} must be a ${kind}duration such as '15m' or a number of milliseconds, got ${JSON.stringify(value)}`);
  }
  return ms;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export interface VirtualWorkflowDeps {
  readonly handlerId: string;
  readonly policy: WorkflowPolicy;
  readonly own: WorkflowRunOwn;
  /** The events the run's waits may see and its `cancelOn` may be triggered by (only those received after the run's own count). */
  readonly events: readonly Arrival[];
  /** Where `ctx.state` is kept (the handler's; seed it, or share it across runs). */
  readonly state: VirtualStateStore;
  /** The run is cancelled: ends its handler's promise race. */
  readonly onCancel: () => void;
  /** Each sleep, wait and state access as it happens. */
  readonly onEntry?: (entry: WorkflowEntry) => void;
  /** How far sleeps and waits may reach (default: from DEDUPE_TTL in the environment, as the worker). */
  readonly limits?: WorkflowLimits;
}

/** Whether `candidate` is taken under `match` for the run's own event (never when the run has no key). */
function sameKey(match: MatchOption, own: WorkspaceEvent, candidate: WorkspaceEvent): boolean {
  const mine = ownKey(match, own);
  return mine !== null && takes(match, mine, candidate);
}

/** The state key of the run's own event, or null (no state, or no key). */
function ownStateKey(policy: WorkflowPolicy, event: WorkspaceEvent): string | null {
  return policy.state === null ? null : keyOf(policy.state.key, event);
}

/** One run's virtual workflow: what its calls share. */
interface VirtualRun {
  readonly deps: VirtualWorkflowDeps;
  readonly record: WorkflowRecord;
  /** The names of the sleeps and waits begun (each once per run). */
  readonly names: Set<string>;
  readonly limits: WorkflowLimits;
}

/** Builds the virtual workflow context of one run and the record it fills. */
export function virtualWorkflow(deps: VirtualWorkflowDeps): { workflow: WorkflowContext; record: WorkflowRecord } {
  const { own, policy } = deps;
  const stateKey = ownStateKey(policy, own.event);
  const initial = stateKey === null ? undefined : deps.state.get(stateKey);
  const record: WorkflowRecord = {
    waits: [],
    cancelled: false,
    clock: own.receivedAt,
    state: initial === undefined ? null : jsonCopy(initial.value),
  };
  const v: VirtualRun = { deps, record, names: new Set<string>(), limits: deps.limits ?? limitsFromEnv() };
  const state = virtualState({
    handlerId: deps.handlerId,
    policy,
    event: own.event,
    store: deps.state,
    clock: () => record.clock,
    onAccess: (access) => {
      if (access.op !== 'get') record.state = jsonCopy(access.value);
      deps.onEntry?.({ type: 'state', access });
    },
  });

  const workflow: WorkflowContext = {
    async sleep(name: string, duration: Duration, opts?: SleepOptions): Promise<void> {
      const label = begin(v, 'ctx.sleep', name);
      const ms = durationMs(label, 'the duration', duration, true);
      const hours = sleepOptions(label, opts)?.businessHours;
      const due = hours ? addBusinessTime(hours, new Date(record.clock), ms).getTime() : record.clock + ms;
      checkReach(label, due, record.clock, own.receivedAt, v.limits);
      return sleepTo(v, name, due);
    },
    async sleepUntil(name: string, at: Date | string | number, opts?: SleepOptions): Promise<void> {
      const label = begin(v, 'ctx.sleepUntil', name);
      let due = Math.max(record.clock, timeMs(label, at));
      const hours = sleepOptions(label, opts)?.businessHours;
      if (hours) due = addBusinessTime(hours, new Date(due), 0).getTime();
      checkReach(label, due, record.clock, own.receivedAt, v.limits);
      return sleepTo(v, name, due);
    },
    async waitForEvent<E extends EventName>(name: string, opts: WaitForEventOptions<E>): Promise<WorkspaceEvent<E> | null> {
      return waitFor(v, name, opts);
    },
    get state() {
      return state;
    },
  };
  return { workflow, record };
}

/** A sleep or wait ended: recorded, and told to `onEntry`. */
function done(v: VirtualRun, wait: VirtualWait, waitedFor: EventName | undefined, by?: Arrival): void {
  v.record.waits.push(wait);
  v.deps.onEntry?.({ type: 'wait', wait, ...(waitedFor ? { waitedFor } : {}), ...(by ? { eventAt: iso(by.at) } : {}) });
}

/** Checks the name of a sleep or wait; its label for messages. */
function begin(v: VirtualRun, what: string, name: unknown): string {
  const label = callLabel(what, name, v.deps.handlerId);
  checkName(label, name);
  if (v.names.has(name as string)) throw nameTwice(label);
  v.names.add(name as string);
  return label;
}

/**
 * The first `cancelOn` event received after the run's own and before `due` (it cancels at its receipt, or at once when
 * it came earlier).
 */
function canceller(v: VirtualRun, due: number): Arrival | null {
  const { own, events: others, policy } = v.deps;
  let first: Arrival | null = null;
  for (const a of others) {
    if (a.at <= own.receivedAt || a.at >= due) continue;
    if (!policy.cancelOn.some((c) => c.event === a.event.name && sameKey(c.match, own.event, a.event))) continue;
    if (first === null || a.at < first.at) first = a;
  }
  return first;
}

/** The run is cancelled by `by` in this sleep or wait: its pending call never settles. */
function cancel(v: VirtualRun, wait: Omit<VirtualWait, 'outcome' | 'event'>, by: Arrival, waitedFor?: EventName): Promise<never> {
  done(v, { ...wait, outcome: 'cancelled', event: jsonCopy(by.event) }, waitedFor, by);
  v.record.clock = Math.max(v.record.clock, by.at);
  v.record.cancelled = true;
  v.deps.onCancel();
  return NEVER;
}

async function sleepTo(v: VirtualRun, name: string, due: number): Promise<void> {
  const startedAt = v.record.clock;
  const wait = { name, kind: 'sleep' as const, startedAt: iso(startedAt), due: iso(due) };
  // A sleep already over does not park the run, so nothing cancels it (as in the worker).
  const by = due > startedAt ? canceller(v, due) : null;
  if (by) return cancel(v, wait, by);
  v.record.clock = Math.max(v.record.clock, due);
  done(v, { ...wait, outcome: 'slept' }, undefined);
}

/** `ctx.waitForEvent` on the virtual clock: the earliest event it takes, else null at its timeout; or cancelled. */
async function waitFor<E extends EventName>(v: VirtualRun, name: string, opts: WaitForEventOptions<E>): Promise<WorkspaceEvent<E> | null> {
  const { own, events: others } = v.deps;
  const { record } = v;
  const label = begin(v, 'ctx.waitForEvent', name);
  const { event: wanted, match, lookback, timeoutMs } = waitCall<E>(label, opts, own.event);
  const startedAt = record.clock;
  const due = startedAt + timeoutMs;
  checkReach(label, due, startedAt, own.receivedAt, v.limits);
  let from: number;
  if (lookback === true) from = own.receivedAt;
  else if (lookback === false) from = startedAt;
  else from = Math.max(own.receivedAt, startedAt - lookback);
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
  const by = parks ? canceller(v, found ? found.at + 1 : due) : null;
  if (by) return cancel(v, wait, by, wanted);
  if (found === null) {
    record.clock = due;
    done(v, { ...wait, outcome: 'timed_out' }, wanted);
    return null;
  }
  record.clock = Math.max(record.clock, found.at);
  done(v, { ...wait, outcome: 'matched', event: jsonCopy(found.event) }, wanted, found);
  return jsonCopy(found.event) as WorkspaceEvent<E>;
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
      // Every member of ctx stays its own (a handler that lists or spreads ctx sees them all), the workflow ones replaced.
      const withWorkflow = Object.defineProperties(
        {},
        { ...Object.getOwnPropertyDescriptors(ctx), ...Object.getOwnPropertyDescriptors(workflow) },
      ) as HandlerContext;
      await Promise.race([handler.handle(event as never, withWorkflow), ended]);
    },
  };
  return { handler: Object.freeze(wrapped), record: () => record };
}
