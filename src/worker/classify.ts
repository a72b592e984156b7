import { UnrecoverableError as BullmqUnrecoverableError } from 'bullmq';
import {
  ApiError,
  LegacyKeyRetiredError,
  QuotaExhaustedError,
  RateLimitedError,
  TokenExpiredError,
  UnauthorizedError,
  asSentence,
} from '../api/index.js';
import { isNonRetriable } from '../handler/index.js';

/** What the worker does with a failed handler run. */
export type Verdict =
  /** Try again with back-off; counts as an attempt. */
  | { readonly kind: 'retry'; readonly reason: string }
  /** Wait and run again without spending an attempt (rate limit, quota). */
  | { readonly kind: 'delay'; readonly ms: number; readonly reason: string }
  /** Dead-letter now: repeating the same input cannot succeed. */
  | { readonly kind: 'dead'; readonly reason: string }
  /** The API token is unusable: pause the `handlers` queue, keep every job. */
  | { readonly kind: 'pause'; readonly reason: string; readonly code: string };

const describe = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/**
 * The one place that maps an error to a verdict (the error type decides retry
 * vs dead-letter). Network, 5xx and 409 retry; 429 waits for
 * the shared limiter without spending an attempt; 4xx validation, 404 and a
 * handler's NonRetriableError (HandlerConfigError and the deprecated
 * UnrecoverableError among them; for one release bullmq's UnrecoverableError, imported here as BullmqUnrecoverableError
 * too, thrown by a handler that imports it from bullmq) dead-letter; an
 * expired, revoked or retired token pauses the queue. Anything else — a
 * HandlerTimeoutError, a plain Error — retries.
 */
export function classify(err: unknown, now: () => number = Date.now): Verdict {
  if (err instanceof TokenExpiredError || err instanceof LegacyKeyRetiredError || err instanceof UnauthorizedError) {
    const remedy = 'Replace WORKSPACE_API_TOKEN and restart, or run `switchyard dlq resume`';
    return { kind: 'pause', code: err.code, reason: `API token unusable (${err.code}): ${asSentence(err.message)} ${remedy}` };
  }
  if (err instanceof QuotaExhaustedError) {
    const until = err.resetAt ? err.resetAt.getTime() - now() : 3_600_000;
    return { kind: 'delay', ms: Math.max(1_000, until), reason: `monthly API quota exhausted; waiting for its reset` };
  }
  if (err instanceof RateLimitedError) {
    return { kind: 'delay', ms: Math.max(250, err.retryAfterMs ?? 10_000), reason: 'API rate limit (429); waiting for Retry-After' };
  }
  if (isNonRetriable(err) || err instanceof BullmqUnrecoverableError) return { kind: 'dead', reason: describe(err) };
  if (err instanceof ApiError) {
    return err.retryable ? { kind: 'retry', reason: describe(err) } : { kind: 'dead', reason: `${describe(err)}${fieldErrors(err)}` };
  }
  return { kind: 'retry', reason: describe(err) };
}

/**
 * The verdict on a run that was the job's last allowed attempt (`attempt` of
 * `attempts`, counted from 1): a `retry` there has no retry left, so it is
 * `dead`, the reason saying so. The one place that rule lives: the runner
 * applies it before it logs, so the log line, the metrics, the history and the
 * queue (an UnrecoverableError, never BullMQ's own count) all say `dead`.
 * Without `attempts` (a run outside the queue) the verdict is unchanged.
 */
export function onAttempt(verdict: Verdict, attempt: number, attempts: number | undefined): Verdict {
  if (verdict.kind !== 'retry' || attempts === undefined || attempt < attempts) return verdict;
  return { kind: 'dead', reason: `${verdict.reason} (attempt ${attempt} of ${attempts}: no retry left)` };
}

function fieldErrors(err: ApiError): string {
  const body = err.body as { errors?: unknown } | undefined;
  return body && typeof body === 'object' && body.errors ? ` ${JSON.stringify(body.errors)}` : '';
}
