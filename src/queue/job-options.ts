import type { JobsOptions } from 'bullmq';

/**
 * Completed jobs are kept for an hour (at most 20 000 per queue): long enough
 * that a re-add of the same job id — the ingest pump repeating a batch after a
 * crash (its list returns to the inbox within ~15 s), a fan-out repeated after a
 * worker died mid-way — is a no-op, and short enough that Redis does not hold
 * every raw body for a day (~4.6 KB per delivery, bench/README.md). Repeats
 * after that are still caught: the 7-day dedupe key at ingest, and `ctx.step`
 * plus the deterministic Idempotency-Keys for writes. Failed jobs are kept:
 * they are the dead-letter listing.
 */
const KEEP_COMPLETED = { age: 3600, count: 20_000 } as const;

/** `events` jobs: validation and fan-out; retried with back-off. */
export const EVENTS_JOB_OPTIONS: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: KEEP_COMPLETED,
  removeOnFail: false,
};

/** How a `handlers` job retries: its handler's `retry` (defaults in the handler kit: 10 attempts, exponential from 2 s). */
export interface HandlerJobRetry {
  readonly attempts: number;
  readonly backoff: { readonly type: 'exponential' | 'fixed'; readonly delay: number };
}

/** `handlers` jobs: one handler run each; each handler retries on its own, as its definition says. */
export function handlerJobOptions(retry: HandlerJobRetry): JobsOptions {
  return {
    attempts: retry.attempts,
    backoff: { type: retry.backoff.type, delay: retry.backoff.delay },
    removeOnComplete: KEEP_COMPLETED,
    removeOnFail: false,
  };
}
