import type { JobsOptions } from 'bullmq';

/**
 * `events` jobs: completed ones are kept for a day so that a re-add of the
 * same job id (the ingest pump repeating a batch after a crash) stays a no-op;
 * failed ones are kept (they are the dead-letter listing).
 */
export const EVENTS_JOB_OPTIONS: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 24 * 3600, count: 100_000 },
  removeOnFail: false,
};

/** `handlers` jobs: same retention reasoning; each handler retries on its own. */
export const HANDLERS_JOB_OPTIONS: JobsOptions = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: { age: 24 * 3600, count: 100_000 },
  removeOnFail: false,
};
