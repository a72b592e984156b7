import { EVENT_NAMES, isEventName, suggestEventName, type EventName, type WorkspaceEvent } from '../events/index.js';
import type { Ability } from '../spec/index.js';
import { closest } from '../util/index.js';
import type { ApiClient } from '../api/index.js';
import type { Logger } from '../log/index.js';
import { HandlerDefinitionError } from './errors.js';
import type { Jsonified } from './jsonified.js';
import type { Duration, RetryOptions, RetryPolicy } from './options.js';
import { commonOptions } from './common.js';
import { runPolicy, type DebounceOptions, type FlowPolicy, type KeyOption, type Priority } from './run-policy.js';
import type { SettingsOf, SettingsSchema } from './settings.js';
import type { CancelOnEntry, StateOf, StateOptions, StateZodSchema, WorkflowContext } from './workflow.js';
import { workflowPolicy, type WorkflowPolicy } from './workflow-policy.js';

/** Token abilities (the API's vocabulary, kept in src/spec); a handler lists those it needs. */
export { ABILITIES, type Ability } from '../spec/index.js';

/**
 * The handler kit's errors: a bad definition, bad settings, a run past its timeout, and those a handler
 * throws to be dead-lettered at once (NonRetriableError; HandlerConfigError for its own configuration;
 * UnrecoverableError, deprecated, the old name of NonRetriableError).
 */
export {
  HandlerConfigError,
  HandlerDefinitionError,
  HandlerSettingsError,
  HandlerTimeoutError,
  NonRetriableError,
  UnrecoverableError,
  type SettingProblem,
} from './errors.js';
export { DEFAULT_RETRY, type Duration, type RetryOptions, type RetryPolicy } from './options.js';
export type { SettingsOf, SettingsSchema } from './settings.js';
export {
  KEY_SOURCES,
  PRIORITIES,
  type BuiltinKey,
  type DebounceOptions,
  type FlowPolicy,
  type KeyOption,
  type Priority,
} from './run-policy.js';
export type { Jsonified } from './jsonified.js';
export type {
  CancelOnEntry,
  CancelOnOption,
  HandlerState,
  KeyedMatch,
  MatchOption,
  SleepOptions,
  StateOf,
  StateOptions,
  StateZodSchema,
  WaitForEventOptions,
  WorkflowContext,
} from './workflow.js';

/**
 * The workspace client handed to handlers: `me` and the resources, without
 * the rate limiter behind them (shared by every run of the process, and not a
 * handler's to use).
 */
export type HandlerApi = Omit<ApiClient, 'rateLimiter'>;

/** `ctx.settings` of a handler without a `settings` schema. */
export type NoSettings = Readonly<Record<never, never>>;

/**
 * The workspace a run belongs to (`ctx.workspace`): `default` in a deployment of one, else the id of
 * its entry in WORKSPACES_FILE. Everything the run touches (ctx.api, ctx.state, waits, order lines) is
 * that workspace's.
 */
export interface HandlerWorkspace {
  readonly id: string;
}

/** What a handler receives besides the event, bound to one delivery and one handler (`State`: its `ctx.state` value). */
export interface HandlerContext<Settings extends object = NoSettings, State = unknown> extends WorkflowContext<State> {
  /**
   * Workspace REST client bound to this run: its Idempotency-Keys derive from
   * (delivery, handler, step), so a retried job replays instead of writing twice.
   */
  readonly api: HandlerApi;
  /**
   * The handler's `settings`, parsed from the environment when the handler
   * modules were loaded (a bad or missing value stopped start-up). Frozen.
   */
  readonly settings: Settings;
  /** The workspace this run belongs to (its webhook path, token and keys): `default` in a deployment of one. */
  readonly workspace: HandlerWorkspace;
  /**
   * Runs `fn` once per delivery and handler under `name` and returns its
   * result; a retried job gets the stored result without running `fn` again.
   * The result is stored as JSON and every run, the first included, gets it
   * back from JSON: its type is {@link Jsonified} (a `Date` comes back as its
   * ISO string, `undefined` properties are dropped).
   */
  step<T>(name: string, fn: () => Promise<T>): Promise<Jsonified<T>>;
  /** pino child bound to delivery, event and handler. */
  readonly log: Logger;
  readonly delivery: {
    /** Delivery key: the envelope id, else `sha256:` + hex of the raw body. */
    readonly key: string;
    readonly receivedAt: string;
    /** 1 on the first run, counting up on retries. */
    readonly attempt: number;
    /**
     * `webhook` for a delivery the workspace sent; `reconcile` for one that
     * `switchyard reconcile` (or the scheduled RECONCILE_EVERY) synthesized
     * from the API's listings because the webhook never arrived; `poll` for a
     * derived event (order.created, order.status_changed, task.due) the poller
     * made; `schedule` for a run of a `defineSchedule` tick.
     */
    readonly source: 'webhook' | 'reconcile' | 'poll' | 'schedule';
  };
  /**
   * Set for a handler with `debounce`: the run handles the latest event of a
   * burst of `count` events of one key (the first folded in at `firstAt`).
   * Null otherwise.
   */
  readonly debounced: { readonly count: number; readonly firstAt: string } | null;
  /**
   * Aborted when the run passes its handler's `timeout` (the reason is a
   * HandlerTimeoutError) or when the job is cancelled. A worker shutting down
   * lets running jobs finish within SHUTDOWN_TIMEOUT and does not abort it.
   * Pass it on to long waits and API calls (`{ signal: ctx.signal }`).
   */
  readonly signal: AbortSignal;
}

/** What `defineHandler` takes: `handle` sees only the events named in `on`. */
export interface HandlerDefinition<
  On extends readonly EventName[],
  S extends SettingsSchema | undefined = undefined,
  St extends StateZodSchema | undefined = undefined,
> {
  /** Unique among loaded handlers; part of job ids and idempotency keys, so keep it stable. */
  readonly id: string;
  readonly on: On;
  readonly abilities?: readonly Ability[];
  /**
   * A zod object schema of the environment variables the handler reads, parsed
   * when the handler modules are loaded (and by `switchyard doctor`): a bad or
   * missing value stops start-up naming the handler and the variable. The
   * result is `ctx.settings`. Switchyard's own secrets cannot be named.
   */
  readonly settings?: S;
  /**
   * Attempts and back-off of a failing run. Default: 10 attempts, exponential
   * from 2 s (2 s, 4 s … 512 s), about 17 minutes before the job is dead-lettered.
   */
  readonly retry?: RetryOptions;
  /** Longest one run may take (`'30s'`, or milliseconds): past it the run fails as retryable and `ctx.signal` fires. Default: no limit. */
  readonly timeout?: Duration;
  /**
   * Which runs get the API budget first, across every worker process: `high`
   * (a customer is waiting), `normal` (default) or `low` (bulk and catch-up
   * work). Each level has its own queue and worker slots, and the shared rate
   * limiter grants calls in this order, FIFO within a level; lower levels keep
   * a minimum share while higher ones are busy (docs/handlers.md, Flow control).
   */
  readonly priority?: Priority;
  /**
   * Runs of this handler with the same key happen one at a time, in the order
   * of the events' `createdAt` (ties: order of receipt), across all workers,
   * retries and restarts. `'conversation'` / `'contact'` read the ids the
   * event carries ({@link KEY_SOURCES}); a function returns any key
   * (undefined: this event is not ordered).
   */
  readonly orderBy?: KeyOption<On[number]>;
  /** With `orderBy`: skip an event older than the last one this handler applied for the same key. */
  readonly skipStale?: boolean;
  /**
   * With `orderBy`: `'release'` (default) lets later runs of the key go on when a run is dead-lettered; `'block'` holds
   * them until it is retried or purged.
   */
  readonly onDead?: 'release' | 'block';
  /** Skip a run whose event is older than this (`'10m'`) when it starts: logged and counted, never run late. */
  readonly maxAge?: Duration;
  /**
   * A burst of events with the same key, each within `wait` of the previous,
   * runs the handler once, with the latest event (`ctx.debounced.count` says how
   * many were folded in), at most `maxWait` after the burst's first event.
   */
  readonly debounce?: DebounceOptions<On[number]>;
  /**
   * Events that cancel a run of this handler while it sleeps or waits (`ctx.sleep`, `ctx.waitForEvent`): recorded
   * `cancelled`, no further steps run.
   */
  readonly cancelOn?: readonly CancelOnEntry[];
  /**
   * `ctx.state`'s key and TTL: `{ key, ttl? }` (`key` defaults to `orderBy`'s; without `orderBy` it is required), default
   * 30 days after the last write. With `orderBy` alone, `ctx.state` has its key.
   */
  readonly state?: StateOptions<St>;
  /**
   * Event names this handler's `ctx.waitForEvent` calls wait for. Their deliveries are kept for lookbacks
   * from start-up, so even the first wait ever for a name sees an event that arrived while its run was busy.
   * Without it a name is kept from the first wait for it on (or from start-up when a loaded handler cancels on it).
   */
  readonly waitsFor?: readonly EventName[];
  handle(event: WorkspaceEvent<On[number]>, ctx: HandlerContext<SettingsOf<S>, StateOf<St>>): Promise<void> | void;
}

/** Marker on every handler; `Symbol.for` so copies of this module loaded twice agree. */
export const HANDLER: unique symbol = Symbol.for('switchyard.handler');

/**
 * A defined handler: frozen, validated, recognisable by {@link isHandler}.
 * `handle` is a method (bivariant) so a `Handler<'lead.won'>` can be held as a
 * `Handler`; the runner only ever passes it events named in `on`.
 */
export interface Handler<N extends EventName = EventName, Settings extends object = NoSettings> {
  readonly [HANDLER]: true;
  readonly id: string;
  readonly on: readonly N[];
  readonly abilities: readonly Ability[];
  /** The settings schema, or null when the handler reads no settings. */
  readonly settings: SettingsSchema | null;
  /** Attempts and back-off, defaults applied. */
  readonly retry: RetryPolicy;
  /** Longest one run may take in milliseconds, or null for no limit. */
  readonly timeoutMs: number | null;
  /** Priority, order, staleness and debounce, defaults applied. */
  readonly flow: FlowPolicy;
  /** `cancelOn` and `ctx.state`'s key and TTL, defaults applied. */
  readonly workflow: WorkflowPolicy;
  /** Always returns a promise; a synchronous throw becomes a rejection. */
  handle(event: WorkspaceEvent<N>, ctx: HandlerContext<Settings>): Promise<void>;
}

const ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
const DEFINITION_KEYS: ReadonlySet<string> = new Set([
  'id',
  'on',
  'abilities',
  'settings',
  'retry',
  'timeout',
  'priority',
  'orderBy',
  'skipStale',
  'onDead',
  'maxAge',
  'debounce',
  'cancelOn',
  'state',
  'waitsFor',
  'handle',
]);

/** True for a value made by `defineHandler` (the loader's test for a module's default export). */
export function isHandler(value: unknown): value is Handler {
  return typeof value === 'object' && value !== null && (value as { [HANDLER]?: unknown })[HANDLER] === true;
}

/**
 * Validates a handler definition and returns it frozen. TypeScript already
 * rejects a misspelled event name; the runtime checks are for `.js` modules and
 * stop start-up with a message that names the handler and suggests a fix.
 */
export function defineHandler<
  const On extends readonly EventName[],
  S extends SettingsSchema | undefined = undefined,
  St extends StateZodSchema | undefined = undefined,
>(def: HandlerDefinition<On, S, St>): Handler<On[number], SettingsOf<S>> {
  const input: unknown = def;
  if (typeof input !== 'object' || input === null)
    throw new HandlerDefinitionError('defineHandler expects an object { id, on, handle }', null);
  const { id, on, abilities = [], settings, retry, timeout, handle } = input as Record<string, unknown>;
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    throw new HandlerDefinitionError(
      `handler id ${JSON.stringify(id)} is invalid: use lowercase letters, digits, ".", "_" or "-", starting with a letter or digit`,
      null,
    );
  }
  const fail = (msg: string): never => {
    throw new HandlerDefinitionError(`handler "${id}": ${msg}`, id);
  };
  if (!Array.isArray(on) || on.length === 0) fail('"on" must be a non-empty array of event names');
  const names = on as unknown[];
  for (const [i, name] of names.entries()) {
    if (!isEventName(name)) {
      const hint = typeof name === 'string' ? suggestEventName(name) : null;
      fail(`unknown event ${JSON.stringify(name)}` + (hint ? `; did you mean "${hint}"?` : `; known events: ${EVENT_NAMES.join(', ')}`));
    }
    if (names.indexOf(name) !== i) fail(`event "${String(name)}" is listed twice in "on"`);
  }
  const { retry: policy, timeoutMs: limit } = commonOptions({ abilities, settings, retry, timeout }, fail);
  for (const [name, value] of Object.entries(input)) {
    // Helpers beside `handle` are allowed; a value named like a misspelled option is not silently ignored.
    if (DEFINITION_KEYS.has(name) || typeof value === 'function') continue;
    const hint = closest(name, [...DEFINITION_KEYS]);
    if (hint) fail(`unknown option "${name}"; did you mean "${hint}"?`);
  }
  const flow = runPolicy(input as Record<string, unknown>, on as EventName[], fail);
  const workflow = workflowPolicy(input as Record<string, unknown>, flow.orderBy, fail, on as EventName[]);
  if (typeof handle !== 'function') fail('"handle" must be a function (event, ctx) => Promise<void>');
  const run = handle as (event: unknown, ctx: HandlerContext<SettingsOf<S>>) => unknown;
  return Object.freeze({
    [HANDLER]: true as const,
    id,
    on: Object.freeze([...(on as On[number][])]),
    abilities: Object.freeze([...new Set(abilities as Ability[])]),
    settings: (settings as SettingsSchema | undefined) ?? null,
    retry: policy,
    timeoutMs: limit,
    flow,
    workflow,
    // `this` stays the definition, so helpers defined beside `handle` keep working.
    // `ctx.state` is typed by `state.schema` inside the definition only (the worker checks each write against it).
    async handle(event: WorkspaceEvent<On[number]>, ctx: HandlerContext<SettingsOf<S>>): Promise<void> {
      await run.call(def, event, ctx);
    },
  });
}
