import type { ApiClient, WriteMemo, IdempotencyKeyGenerator } from '../api/index.js';
import {
  type HandlerApi,
  type HandlerContext,
  type HandlerWorkspace,
  type Jsonified,
  HandlerConfigError,
  type HandlerState,
} from '../handler/index.js';
import { DEFAULT_WORKSPACE } from '../config/index.js';
import type { AttemptObserver } from '../lifecycle/index.js';
import type { Logger } from '../log/index.js';
import type { RerunRef } from '../queue/index.js';
import { currentStep, deterministicKeys, runScope } from './derived-keys.js';
import type { DurableRun } from './durable.js';
import { FromStepError, type FromStep } from './from-step.js';
import type { StepStore } from './steps.js';
import type { Priority } from '../util/index.js';

export interface ContextDeps {
  /**
   * Builds the API client of one run with the given key generator, its calls
   * taking API slots at the run's priority (and, for a reconciled delivery,
   * within reconcile's budget), its calls reported to `onCall` (the attempt's
   * observer) when given; undefined when no API is configured.
   */
  api:
    | ((
        keys: IdempotencyKeyGenerator,
        priority: Priority,
        source?: HandlerContext['delivery']['source'],
        onCall?: AttemptObserver['call'],
        memo?: WriteMemo,
      ) => ApiClient)
    | undefined;
  /** The handler's priority (default normal). */
  priority?: Priority | undefined;
  /** A debounced run: how many events its burst folded in. */
  debounced?: HandlerContext['debounced'] | undefined;
  steps: StepStore;
  log: Logger;
  delivery: HandlerContext['delivery'];
  handlerId: string;
  /** A re-run (`switchyard rerun`): its own Idempotency-Keys and step scope, derived from its id. */
  rerun?: RerunRef | undefined;
  /** A re-run from a step: the steps before it are read from the original run (./from-step.ts). */
  fromStep?: FromStep | null | undefined;
  /** The handler's settings, parsed when the handler modules were loaded. */
  settings: Readonly<Record<string, unknown>>;
  /** Aborted when the run is to stop (its timeout); absent: a signal that never fires, made only if the handler reads it. */
  signal?: AbortSignal | undefined;
  /** The attempt's lifecycle observer (its API calls and steps); absent when nobody observes. */
  observe?: AttemptObserver | undefined;
  /**
   * The durable part of the run (sleeps, waits, ctx.state, the memory of its API writes); absent where
   * runs cannot park: there the workflow calls throw, unless the handler's ctx is given the virtual ones
   * (./virtual-workflow.ts: `replay --inline`, switchyard/testing's testHandler).
   */
  durable?: DurableRun | undefined;
  /** `ctx.workspace` ({@link runWorkspace}); default the workspace of a deployment of one. */
  workspace?: HandlerWorkspace | undefined;
}

const DEFAULT_RUN_WORKSPACE: HandlerWorkspace = Object.freeze({ id: DEFAULT_WORKSPACE });

/** `ctx.workspace` of the runs of workspace `id` (frozen; `default` when not given). */
export function runWorkspace(id: string | undefined): HandlerWorkspace {
  return id === undefined || id === DEFAULT_WORKSPACE ? DEFAULT_RUN_WORKSPACE : Object.freeze({ id });
}

function noDurable(what: string): never {
  throw new HandlerConfigError(`${what} needs the worker's Redis (durable sleeps, waits and state); it is not available here`);
}

/** The client as handlers get it: without the process-wide rate limiter (see HandlerApi). */
export function handlerApi(client: ApiClient): HandlerApi {
  const { rateLimiter: _limiter, ...api } = client;
  return Object.freeze(api);
}

/** Builds the `ctx` of one handler run. */
export function createContext(deps: ContextDeps): HandlerContext<Readonly<Record<string, unknown>>> {
  // What only some runs use (steps, ctx.state) is made on first use: most runs touch neither.
  let scope: string | undefined;
  let used: Set<string> | undefined;
  let state: HandlerState | undefined;
  let api: HandlerApi | undefined;
  let idle: AbortSignal | undefined;
  const durable = deps.durable;
  return {
    get api(): HandlerApi {
      if (!deps.api) {
        throw new HandlerConfigError('this handler calls the workspace API, but WORKSPACE_API_URL and WORKSPACE_API_TOKEN are not set');
      }
      durable?.guard();
      const observe = deps.observe;
      api ??= handlerApi(
        deps.api(
          deterministicKeys(deps.delivery.key, deps.handlerId, deps.rerun?.id),
          deps.priority ?? 'normal',
          deps.delivery.source,
          observe ? (e) => observe.call(e) : undefined,
          durable?.memo,
        ),
      );
      return api;
    },
    sleep: (name, duration, opts) => (durable ? durable.sleep(name, duration, opts) : noDurable('ctx.sleep')),
    sleepUntil: (name, at, opts) => (durable ? durable.sleepUntil(name, at, opts) : noDurable('ctx.sleepUntil')),
    waitForEvent: (name, opts) => (durable ? durable.waitForEvent(name, opts) : noDurable('ctx.waitForEvent')),
    get state(): HandlerState {
      return (state ??= stateOf(durable));
    },
    // Read through: the runner makes the run's child logger on first use.
    get log() {
      return deps.log;
    },
    delivery: deps.delivery,
    workspace: deps.workspace ?? DEFAULT_RUN_WORKSPACE,
    debounced: deps.debounced ?? null,
    settings: deps.settings,
    get signal(): AbortSignal {
      return deps.signal ?? (idle ??= new AbortController().signal);
    },
    async step<T>(name: string, fn: () => Promise<T>): Promise<Jsonified<T>> {
      if (typeof name !== 'string' || name === '') throw new TypeError('ctx.step needs a non-empty name');
      used ??= new Set<string>();
      scope ??= runScope({ key: deps.delivery.key, rerun: deps.rerun }, deps.handlerId);
      if (used.has(name)) throw new TypeError(`ctx.step "${name}" ran twice in one run: step names must be unique within a handler`);
      if (currentStep.getStore()) throw new TypeError(`ctx.step "${name}" is nested inside "${currentStep.getStore()}": steps cannot nest`);
      durable?.guard();
      used.add(name);
      // A re-run from a step: a step the original completed before it returns what it returned then.
      const from = deps.fromStep?.before.has(name) ? deps.fromStep : undefined;
      let stored = await deps.steps.get(from ? from.scope : scope, name);
      if (from && stored === null)
        throw new FromStepError(`rerun from step "${from.name}": the original run's result of step "${name}" is gone (expired)`);
      if (stored !== null) {
        deps.observe?.step(name, 'stored');
        deps.log.debug({ step: name }, 'step already done; using its stored result');
      } else {
        deps.observe?.step(name, 'started');
        const value = await currentStep.run(name, fn);
        stored = JSON.stringify({ v: value });
        await deps.steps.set(scope, name, stored);
        deps.observe?.step(name, 'done');
      }
      // The first run too gets the value back from JSON, so every run sees the same shape.
      return (JSON.parse(stored) as { v?: Jsonified<T> }).v as Jsonified<T>;
    },
  };
}

/** `ctx.state`: the run's durable state (src/worker/durable.ts), or calls that throw where runs cannot park. */
function stateOf(durable: DurableRun | undefined): HandlerState {
  return {
    get: async () => (durable ? await durable.stateGet() : noDurable('ctx.state')),
    set: async (value) => {
      if (!durable) noDurable('ctx.state');
      await durable.stateWrite('set', () => value as never);
    },
    update: async (fn) => (durable ? await durable.stateWrite('update', (c) => fn(c ?? null) as never) : noDurable('ctx.state')),
  };
}
