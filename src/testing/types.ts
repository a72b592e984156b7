import type { HttpMethod } from '../api/index.js';
import type { EventName, WorkspaceEvent } from '../events/index.js';
import type { Sandbox } from '../sandbox/index.js';
import type { StepStore, VirtualWait } from '../worker/index.js';
import type { LogLevel, LogLine } from './memory-log.js';
import type { SettingsInput } from './given-settings.js';
import type { StepRecord } from './steps.js';

/**
 * How a run ended, named as the worker's job decisions: `completed`, `cancelled` (a `cancelOn` event came
 * while it slept or waited: nothing after that sleep or wait ran), or what the worker does with the failure.
 */
export type TestOutcome = 'completed' | 'cancelled' | 'retry' | 'delay' | 'dead' | 'pause';

/**
 * An event a tested run's waits may see (and its `cancelOn` may be triggered by): the event
 * (`createEvent`), or `{ event, at }` (received at that time) or `{ event, after }` (received that long
 * after the run's own event, `'30m'` or ms). Without a time: 1 ms after the previous one, so in order,
 * after the run's own event.
 */
export type TestEventInput =
  | WorkspaceEvent
  | { readonly event: WorkspaceEvent; readonly at?: Date | string | number; readonly after?: undefined }
  | { readonly event: WorkspaceEvent; readonly after: number | string; readonly at?: undefined };

/**
 * One `ctx.sleep`, `ctx.sleepUntil` or `ctx.waitForEvent` of a tested run, on its virtual clock: `{ name, kind, startedAt,
 * due, outcome, event? }`.
 */
export type TestWait = VirtualWait;

/** One API request of a run (each attempt of a call the client retries is one). */
export interface TestCall {
  /** Client operation, e.g. `contacts.labels.add`. */
  readonly op: string;
  readonly method: HttpMethod;
  /** Below the API base, without the query string: `/contacts/36/labels`. */
  readonly path: string;
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The Idempotency-Key sent: the worker's own, derived from delivery, handler and step. */
  readonly idempotencyKey: string | undefined;
  /** The request body as JSON (what was sent); undefined without one. */
  readonly body: unknown;
  readonly attempt: number;
  /** The API answered with its stored answer to an earlier request with this key. */
  readonly replayed: boolean;
}

/** Where a tested run's event came from, as `ctx.delivery.source` says (`schedule` is a schedule's, not an event's). */
export type TestSource = 'webhook' | 'reconcile' | 'poll';

/** What {@link testHandler} and {@link testSchedule} both take; all optional. */
export interface TestRunOptions<Settings extends object = object> {
  /** Call this API instead of an in-process sandbox: `url` as WORKSPACE_API_URL (ending in `/api/v1`). */
  readonly api?: { readonly url: string; readonly token: string; readonly fetch?: typeof fetch };
  /** The sandbox to call in process (state and request log shared across calls); default a fresh seeded one per call. */
  readonly sandbox?: Sandbox;
  /** Token for the sandbox (not used with `api`); default its full-access token. */
  readonly token?: string;
  /** Settings values, checked by the handler's (or schedule's) schema, in place of `env`'s. */
  readonly settings?: SettingsInput<Settings>;
  /** Environment the settings are parsed from as when modules load (default none: each setting's default). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `ctx.delivery.attempt` (default 1). */
  readonly attempt?: number;
  /**
   * Where `ctx.step` results are kept; pass one store to several calls (same event or tick) to test a retry. Default a
   * fresh MemoryStepStore.
   */
  readonly steps?: StepStore;
  /** Lowest level kept in `logs` (default `info`, as in production). */
  readonly logLevel?: LogLevel;
  readonly signal?: AbortSignal;
  /** `ctx.workspace.id` of the run (`'acme'`), as in a deployment of many; default `default` (a deployment of one). */
  readonly workspace?: string;
}

/** Options of {@link testHandler}; all optional. */
export interface TestHandlerOptions<Settings extends object = object> extends TestRunOptions<Settings> {
  /**
   * `ctx.delivery.source`: `reconcile` runs the handler as on a delivery `switchyard reconcile` synthesized
   * (key `rc:<change key>`, so its Idempotency-Keys are that run's; refused for an event reconcile never
   * infers); default `poll` for a derived event (order.created, order.status_changed, task.due), else `webhook`.
   */
  readonly source?: TestSource;
  /**
   * The time: `receivedAt` of an event without one, and the clock of a fresh sandbox. The run's
   * virtual clock starts at its event's `receivedAt`; sleeps and waits move it (and a fresh sandbox's) forward at once.
   */
  readonly now?: Date | (() => Date);
  /** The events the run's `ctx.waitForEvent` may see and its `cancelOn` may be triggered by (see {@link TestEventInput}); default none. */
  readonly events?: readonly TestEventInput[];
  /** `ctx.state`'s value for the run's key when the run starts (default none: `get()` gives null). */
  readonly state?: unknown;
  /**
   * Run as `switchyard rerun --from-step NAME` runs it: the steps named in `previous` return what `previous` gives
   * (as the original run's results would), this step and what follows run fresh. The run's Idempotency-Keys and
   * step results are a re-run's (its own, not the delivery's).
   */
  readonly fromStep?: string;
  /** With `fromStep`: what each step before it returned in the original run, in the order they completed. */
  readonly previous?: Readonly<Record<string, unknown>>;
}

/**
 * What a tested run gives back, for a handler and a schedule alike. Nothing is thrown for a failing run: `outcome` says
 * what the worker would do.
 */
export interface TestRunResult<O extends string = TestOutcome> {
  readonly outcome: O;
  /** What the handler (or schedule) threw (undefined when completed). */
  readonly error: unknown;
  /** The worker's reason for the outcome, as the dead-letter listing shows it. */
  readonly reason: string | undefined;
  readonly calls: readonly TestCall[];
  /** The run's `ctx.step`s in order. */
  readonly steps: readonly StepRecord[];
  /** The run's log lines as pino wrote them (redacted as in production), parsed. */
  readonly logs: readonly LogLine[];
  /** The sandbox called (the given one or the fresh one, to inspect); undefined with `api`. */
  readonly sandbox: Sandbox | undefined;
  /** The run's sleeps and waits in order, on its virtual clock (none waited for real); a schedule's run has none. */
  readonly waits: readonly TestWait[];
}

/** What {@link testHandler} returns. */
export interface TestHandlerResult<N extends EventName = EventName> extends TestRunResult {
  /** The event `handle` received. */
  readonly event: WorkspaceEvent<N>;
  readonly delivery: { readonly key: string; readonly receivedAt: string; readonly attempt: number; readonly source: TestSource };
  /** `ctx.state`'s value for the run's key after the run (as JSON gives it back), or null. */
  readonly state: unknown;
}

/**
 * How a schedule's run ended, named as the worker's decisions: `completed`, `retry`, `delay` (a 429 or the
 * quota: no attempt spent) or `dead` (never `cancelled`: a schedule has no `cancelOn`). A schedule's run is
 * never `pause`d: an unusable token is retried as the worker does for schedules (and is `dead` on the last attempt).
 */
export type TestScheduleOutcome = Exclude<TestOutcome, 'pause' | 'cancelled'>;

/** Options of {@link testSchedule}; all optional. */
export interface TestScheduleOptions<Settings extends object = object> extends TestRunOptions<Settings> {
  /**
   * The tick the run is for (`ctx.tick`, and the run's key `schedule:<id>:<tick ISO>`, so its Idempotency-Keys
   * and steps): a Date, an ISO time or ms since the epoch; also the clock of a fresh sandbox. Default now.
   */
  readonly at?: Date | string | number;
}

/** What {@link testSchedule} returns: {@link TestHandlerResult}'s shape, with the tick instead of an event. */
export interface TestScheduleResult extends TestRunResult<TestScheduleOutcome> {
  /** `ctx.tick`: the tick the run was for (ISO 8601, UTC). */
  readonly tick: string;
  readonly delivery: { readonly key: string; readonly receivedAt: string; readonly attempt: number; readonly source: 'schedule' };
}
