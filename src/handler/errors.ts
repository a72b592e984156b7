import { UnrecoverableError } from 'bullmq';
import { formatDuration } from './options.js';

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
export class HandlerConfigError extends UnrecoverableError {
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
  constructor(readonly handlerId: string, readonly timeoutMs: number) {
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
