import { durationOption, formatDuration } from '../util/index.js';

/** A duration: milliseconds, or text such as `'2s'`, `'500ms'`, `'5m'`. */
export type Duration = number | string;

/** A handler's `retry` option; every field is optional. */
export interface RetryOptions {
  /** Runs in all, the first included, before the job is dead-lettered (default 10). */
  readonly attempts?: number;
  /** Wait before each retry (default exponential from 2 s). */
  readonly backoff?: {
    /** `exponential`: `delay`, then twice that, and so on; `fixed`: `delay` every time. */
    readonly type: 'exponential' | 'fixed';
    readonly delay: Duration;
  };
}

/** A handler's retry policy with defaults applied (delay in milliseconds). */
export interface RetryPolicy {
  readonly attempts: number;
  readonly backoff: { readonly type: 'exponential' | 'fixed'; readonly delay: number };
}

/**
 * Default retries: 10 runs, waiting 2 s, 4 s, 8 s … 512 s between them — about
 * 17 minutes (1 022 s) of back-off before the job is dead-lettered.
 */
export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ attempts: 10, backoff: Object.freeze({ type: 'exponential', delay: 2_000 }) });

export { formatDuration };

const MAX_ATTEMPTS = 1_000;
const BACKOFF_TYPES = ['exponential', 'fixed'];

/** The total back-off of a policy: how long a job that always fails takes to be dead-lettered (run time aside). */
export function retryHorizonMs(policy: RetryPolicy): number {
  const waits = policy.attempts - 1;
  return policy.backoff.type === 'fixed' ? waits * policy.backoff.delay : policy.backoff.delay * (2 ** waits - 1);
}

/** One line for `switchyard handlers`: `10 attempts, exponential from 2s (gives up after ~17m)`. */
export function describeRetry(policy: RetryPolicy): string {
  if (policy.attempts === 1) return '1 attempt (no retry)';
  const { type, delay } = policy.backoff;
  const wait = type === 'fixed' ? `every ${formatDuration(delay)}` : `exponential from ${formatDuration(delay)}`;
  return `${policy.attempts} attempts, ${wait} (dead-lettered after ~${formatDuration(retryHorizonMs(policy))} of back-off)`;
}

/** Validates `retry`; `fail` throws the definition error naming the handler. */
export function retryPolicy(input: unknown, fail: (msg: string) => never): RetryPolicy {
  if (input === undefined) return DEFAULT_RETRY;
  if (typeof input !== 'object' || input === null) return fail('"retry" must be an object { attempts, backoff: { type, delay } }');
  const { attempts = DEFAULT_RETRY.attempts, backoff, ...rest } = input as Record<string, unknown>;
  const unknownKey = Object.keys(rest)[0];
  if (unknownKey !== undefined) fail(`"retry" has an unknown option "${unknownKey}"; expected attempts and backoff`);
  if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 1 || attempts > MAX_ATTEMPTS) {
    const range = `a whole number from 1 to ${MAX_ATTEMPTS} (runs in all, the first included)`;
    fail(`"retry.attempts" must be ${range}, got ${JSON.stringify(attempts)}`);
  }
  if (backoff === undefined) return Object.freeze({ attempts, backoff: DEFAULT_RETRY.backoff });
  const { type, delay } = (typeof backoff === 'object' && backoff !== null ? backoff : {}) as Record<string, unknown>;
  if (typeof type !== 'string' || !BACKOFF_TYPES.includes(type)) {
    fail(`"retry.backoff" must be { type: 'exponential' | 'fixed', delay }, got type ${JSON.stringify(type)}`);
  }
  const ms = durationOption(delay, true);
  if (ms === null)
    fail(`"retry.backoff.delay" must be a duration such as '2s', '500ms' or a number of milliseconds, got ${JSON.stringify(delay)}`);
  return Object.freeze({ attempts, backoff: Object.freeze({ type: type as RetryPolicy['backoff']['type'], delay: ms }) });
}

/** Validates `timeout`: a positive duration, or undefined for none. */
export function timeoutMs(input: unknown, fail: (msg: string) => never): number | null {
  if (input === undefined) return null;
  const ms = durationOption(input, false);
  if (ms === null)
    fail(`"timeout" must be a positive duration such as '30s', '2m' or a number of milliseconds, got ${JSON.stringify(input)}`);
  return ms;
}
