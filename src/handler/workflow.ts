import type { EventName, WorkspaceEvent } from '../events/catalogue.js';
import type { BusinessHours } from '../recipes/business-hours.js';
import type { KeyOption } from './flow.js';
import type { Jsonified } from './jsonified.js';
import type { Duration } from './options.js';

/**
 * Workflows over time: the part of `ctx` and of a handler definition that
 * lets one run sleep, wait for a later event, be cancelled by one, and keep
 * state per key. Every sleep and wait is durable (it survives restarts and
 * SIGKILL of any process): the run gives up its worker slot, its lock and its
 * API budget while it waits, and resumes from the start with what it already
 * did remembered: steps are not run again, API writes are not made again,
 * and a sleep or wait that is over returns at once (names are per run, so
 * keep them stable and unique within a handler).
 */

/**
 * Which events a wait or `cancelOn` takes: those of the run's own
 * conversation (`'conversation'`) or contact (`'contact'`), or those for which
 * the function gives the same key as it gives for the run's own event (it is
 * called with both; `undefined` or `null`: no key, no match).
 */
export type MatchOption = KeyOption<EventName>;

/** A sleep's options. */
export interface SleepOptions {
  /** Count only open hours (`businessHoursSetting()` parses the usual text, e.g. `Mon-Fri 09:00-17:00 Europe/Berlin`). */
  readonly businessHours?: BusinessHours;
}

/** What `ctx.waitForEvent` waits for. */
export interface WaitForEventOptions<E extends EventName> {
  /** The event name waited for. */
  readonly event: E;
  /** Which of those events count (see {@link MatchOption}). */
  readonly match: MatchOption;
  /** How long to wait (`'15m'`, or milliseconds); past it the wait returns null. */
  readonly timeout: Duration;
  /**
   * Events of the key received after the run's own event was received and
   * before the wait began count too (default `true`: a reply that arrived
   * while the run was busy is not missed). `false`: only events received
   * after the wait began; a duration: those received at most that long before
   * the wait began (and after the run's own event).
   */
  readonly lookback?: boolean | Duration;
}

/** A handler's `cancelOn` entry: a matching event cancels a run that is sleeping or waiting (recorded `cancelled`; no further steps run). */
export interface CancelOnOption {
  readonly event: EventName;
  readonly match: MatchOption;
}

/** A handler's `state`: the key of its state (required without `orderBy`, whose key it is otherwise) and how long an unchanged state is kept. */
export interface StateOptions {
  readonly key?: MatchOption;
  /** Kept this long after its last write (`'30d'`, or milliseconds). Default 30 days. */
  readonly ttl?: Duration;
}

/** A JSON value kept per (handler, key): `ctx.state`. One writer at a time across every worker. */
export interface HandlerState<T = unknown> {
  /** The value, or null when none was set (or it expired). */
  get(): Promise<Jsonified<T> | null>;
  /** Replaces the value. */
  set(value: T): Promise<void>;
  /** Reads the value, applies `fn` and writes its result, with no other writer in between; returns what was written. */
  update(fn: (current: Jsonified<T> | null) => T | Promise<T>): Promise<Jsonified<T>>;
}

/** The workflow part of `ctx`. */
export interface WorkflowContext {
  /** Sleeps `duration` (`'3d'`, or milliseconds) under `name`; with `{ businessHours }` only open hours count. */
  sleep(name: string, duration: Duration, opts?: SleepOptions): Promise<void>;
  /** Sleeps until `at` under `name` (at once when it has passed). */
  sleepUntil(name: string, at: Date | string | number, opts?: SleepOptions): Promise<void>;
  /** The first matching event received (see {@link WaitForEventOptions.lookback}), or null once `timeout` passed. */
  waitForEvent<E extends EventName>(name: string, opts: WaitForEventOptions<E>): Promise<WorkspaceEvent<E> | null>;
  /**
   * The state of this handler for the run's key (its `orderBy` key, or its
   * `state.key`). Using it in a handler with neither throws HandlerConfigError.
   */
  readonly state: HandlerState;
}
