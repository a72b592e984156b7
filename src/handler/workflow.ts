import type { EventName, WorkspaceEvent } from '../events/index.js';
import type { BusinessHours } from '../recipes/index.js';
import type { BuiltinKey, KeyOption } from './run-policy.js';
import type { Jsonified } from './jsonified.js';
import type { Duration } from './options.js';
import type { z } from 'zod';

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

/** A match that compares a built-in key first and then asks `where` about the events of that key only. */
export interface KeyedMatch<E extends EventName = EventName> {
  /** The key compared first: the run's own conversation or contact. */
  readonly on: BuiltinKey;
  /** Called only with events of the run's own key (of the name waited for): true takes the event. */
  where(event: WorkspaceEvent<E>): boolean;
}

/**
 * Which events a wait or `cancelOn` takes: those of the run's own
 * conversation (`'conversation'`) or contact (`'contact'`); those of that key
 * for which `where` says true (`{ on: 'conversation', where: (e) => … }`); or
 * (deprecated in `ctx.waitForEvent`: every event of the name wakes the run to
 * be compared) those for which a key function gives the same key as it gives
 * for the run's own event (`undefined` or `null`: no key, no match).
 */
export type MatchOption<E extends EventName = EventName> = BuiltinKey | KeyedMatch<E> | KeyOption<EventName>;

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
  readonly match: MatchOption<E>;
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

/**
 * A handler's `cancelOn` entry: a matching event cancels a run that is sleeping or waiting (recorded `cancelled`; no
 * further steps run).
 */
export interface CancelOnOption<E extends EventName = EventName> {
  readonly event: E;
  readonly match: MatchOption<E>;
}

/** One `cancelOn` entry, its `where` typed by its `event`. */
export type CancelOnEntry = { [E in EventName]: CancelOnOption<E> }[EventName];

/** A zod schema (any copy of zod) a handler's state is typed and checked with. */
export type StateZodSchema = z.ZodType;

/** The type of `ctx.state`'s value a `state.schema` gives (`unknown` without one). */
export type StateOf<St> = St extends z.ZodType ? z.output<St> : unknown;

/**
 * A handler's `state`: the key of its state (required without `orderBy`, whose key it is otherwise), how long an
 * unchanged state is kept, and optionally a zod `schema`: `ctx.state` is then typed by it (no casts) and every
 * write must satisfy it.
 */
export interface StateOptions<St extends StateZodSchema | undefined = StateZodSchema | undefined> {
  readonly key?: KeyOption<EventName>;
  /** Kept this long after its last write (`'30d'`, or milliseconds). Default 30 days. */
  readonly ttl?: Duration;
  /** The value's shape, e.g. `z.object({ sent: z.number() })`: types `ctx.state`; a write that does not match is refused. */
  readonly schema?: St;
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

/** The workflow part of `ctx` (`State`: the value `ctx.state` holds, from `state.schema`). */
export interface WorkflowContext<State = unknown> {
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
  readonly state: HandlerState<State>;
}
