import { formatDuration } from './options.js';

/** Brand of every NonRetriableError; `Symbol.for`, so two copies of the package agree on it. */
const NON_RETRIABLE = Symbol.for('switchyard.nonRetriable');

/**
 * Thrown by a handler or a schedule to stop at once: the run is dead-lettered
 * with this message on the attempt that threw it, never retried (repeating the
 * same input cannot succeed).
 *
 * @example
 * if (!stage) throw new NonRetriableError(`no stage named ${name}`);
 */
export class NonRetriableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NonRetriableError';
  }
}
Object.defineProperty(NonRetriableError.prototype, NON_RETRIABLE, { value: true });

/**
 * True for a {@link NonRetriableError} (its subclasses included), whichever
 * copy of the package made it.
 */
export function isNonRetriable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { [NON_RETRIABLE]?: unknown })[NON_RETRIABLE] === true;
}

/**
 * @deprecated Use {@link NonRetriableError}; this alias goes in the next release.
 * A NonRetriableError named `UnrecoverableError` (as the dead-letter reasons
 * said before), no longer bullmq's class.
 */
export class UnrecoverableError extends NonRetriableError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UnrecoverableError';
  }
}

/** A handler definition that breaks the contract; thrown by `defineHandler`. */
export class HandlerDefinitionError extends Error {
  readonly code = 'invalid_handler';
  constructor(
    message: string,
    /** The handler's id when it had a usable one. */
    readonly handlerId: string | null,
  ) {
    super(message);
    this.name = 'HandlerDefinitionError';
  }
}

/**
 * Raised for a handler's own configuration problem at run time (a stage or
 * label that does not exist in the workspace): dead-lettered with the reason,
 * never retried blindly (repeating the same input cannot succeed).
 */
export class HandlerConfigError extends NonRetriableError {
  readonly code = 'handler_config';
  constructor(message: string) {
    super(message);
    this.name = 'HandlerConfigError';
  }
}

/** One setting that does not parse: the handler, the variable and what is expected. */
export interface SettingProblem {
  readonly handlerId: string;
  readonly variable: string;
  readonly problem: string;
}

/**
 * Handler settings the environment does not satisfy (missing or invalid);
 * thrown where handler modules are loaded, so start-up stops naming each
 * handler, variable and what is expected. Never carries a value.
 */
export class HandlerSettingsError extends Error {
  readonly code = 'handler_settings';
  constructor(readonly problems: readonly SettingProblem[]) {
    super(settingsMessage(problems));
    this.name = 'HandlerSettingsError';
  }
}

/**
 * A run that took longer than its handler's `timeout`: its `ctx.signal` is
 * aborted with this error and the run fails as retryable (the job runs again
 * with back-off, spending an attempt).
 */
export class HandlerTimeoutError extends Error {
  readonly code = 'handler_timeout';
  constructor(
    readonly handlerId: string,
    readonly timeoutMs: number,
  ) {
    super(`handler "${handlerId}" did not finish within its timeout of ${formatDuration(timeoutMs)}`);
    this.name = 'HandlerTimeoutError';
  }
}

/** `handler "a" settings: X is not set: expected string; Y is invalid: …`, one such part per handler. */
function settingsMessage(problems: readonly SettingProblem[]): string {
  const byHandler = new Map<string, string[]>();
  for (const p of problems) byHandler.set(p.handlerId, [...(byHandler.get(p.handlerId) ?? []), p.problem]);
  return [...byHandler].map(([id, list]) => `handler "${id}" settings: ${list.join('; ')}`).join('\n');
}
