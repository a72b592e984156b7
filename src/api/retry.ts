import { ApiError } from './errors.js';

/**
 * Bounds of the client's retry loop (HTTP attempts of one call, within the
 * call). Not a handler's `retry` (attempts of a whole run, in the queue): that
 * one is `RetryOptions` of `switchyard`.
 */
export interface ApiRetryOptions {
  /** Attempts in total, the first included (default 4; 1 disables retries). */
  maxAttempts: number;
  /** First back-off step in ms (default 250). */
  baseMs: number;
  /**
   * Largest single wait in ms (default 30 000). A `Retry-After` longer than this is
   * not waited for: the error is thrown so the caller (e.g. a queue) can reschedule.
   */
  maxMs: number;
}

/** The client's own retry of a call (not a handler's job retry, which is the handler kit's DEFAULT_RETRY). */
export const DEFAULT_API_RETRY: ApiRetryOptions = { maxAttempts: 4, baseMs: 250, maxMs: 30_000 };

/**
 * Whether a failed attempt may be repeated. Only errors marked `retryable`
 * (network, timeout, 5xx, 409, 429 burst) and only requests that cannot do the
 * work twice: reads, PUT/DELETE, and writes carrying an Idempotency-Key (the
 * same key is re-sent, so the service replays instead of repeating).
 */
export function mayRetry(err: unknown, safeToRepeat: boolean): err is ApiError {
  return err instanceof ApiError && err.retryable && safeToRepeat;
}

/**
 * Wait before attempt `attempt + 1` (attempt counts from 1): "full jitter"
 * exponential back-off, min(maxMs, baseMs·2^(attempt-1)) · random, and never
 * less than the service's Retry-After. Returns undefined when the service asks
 * for more than `maxMs` (give up rather than block for minutes).
 */
export function backoffMs(attempt: number, err: ApiError, opts: ApiRetryOptions, random: () => number = Math.random): number | undefined {
  const cap = Math.min(opts.maxMs, opts.baseMs * 2 ** (attempt - 1));
  const jittered = Math.round(cap * random());
  const retryAfter = err.retryAfterMs;
  if (retryAfter === undefined) return jittered;
  if (retryAfter > opts.maxMs) return undefined;
  // A little jitter on top of Retry-After so many waiting clients do not return in lockstep.
  return retryAfter + Math.round(Math.min(opts.baseMs, 1000) * random());
}
