import type { ApiClient } from '../api/client.js';
import type { IdempotencyKeyGenerator } from '../api/idempotency.js';
import { jobIdFor } from '../events/envelope.js';
import type { HandlerContext } from '../handler.js';
import type { Logger } from '../log.js';
import { HandlerConfigError } from './classify.js';
import { handlerEnv } from './handler-env.js';
import { currentStep, deterministicKeys } from './idempotency.js';
import type { StepStore } from './steps.js';

export interface ContextDeps {
  /** Builds the API client of one run with the given key generator; undefined when no API is configured. */
  api: ((keys: IdempotencyKeyGenerator) => ApiClient) | undefined;
  steps: StepStore;
  log: Logger;
  delivery: HandlerContext['delivery'];
  handlerId: string;
  /** The process environment; the handler sees it without Switchyard's own secrets (see handler-env.ts). */
  env: Readonly<Record<string, string | undefined>>;
  signal: AbortSignal;
}

/** Builds the `ctx` of one handler run. */
export function createContext(deps: ContextDeps): HandlerContext {
  const scope = jobIdFor(deps.delivery.key, deps.handlerId);
  const used = new Set<string>();
  let api: ApiClient | undefined;
  return {
    get api(): ApiClient {
      if (!deps.api) {
        throw new HandlerConfigError('this handler calls the workspace API, but WORKSPACE_API_URL and WORKSPACE_API_TOKEN are not set');
      }
      api ??= deps.api(deterministicKeys(deps.delivery.key, deps.handlerId));
      return api;
    },
    log: deps.log,
    delivery: deps.delivery,
    env: handlerEnv(deps.env),
    signal: deps.signal,
    async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
      if (typeof name !== 'string' || name === '') throw new TypeError('ctx.step needs a non-empty name');
      if (used.has(name)) throw new TypeError(`ctx.step "${name}" ran twice in one run: step names must be unique within a handler`);
      if (currentStep.getStore()) throw new TypeError(`ctx.step "${name}" is nested inside "${currentStep.getStore()}": steps cannot nest`);
      used.add(name);
      const stored = await deps.steps.get(scope, name);
      if (stored !== null) {
        deps.log.debug({ step: name }, 'step already done; using its stored result');
        return (JSON.parse(stored) as { v?: T }).v as T;
      }
      const value = await currentStep.run(name, fn);
      await deps.steps.set(scope, name, JSON.stringify({ v: value }));
      return value;
    },
  };
}
