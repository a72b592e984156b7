import { rerunJobId } from '../queue/index.js';

/**
 * Where `switchyard rerun` batches live, under the queue prefix (so a
 * `{switchyard}` prefix keeps them in one Cluster slot with the queues):
 *
 *   <prefix>:rerun:batches        ZSET  created (ms) → batch id, newest last (`rerun status` lists them)
 *   <prefix>:rerun:running        SET   batches still fed or tracked (every worker's feeder reads it)
 *   <prefix>:rerun:b:<id>         HASH  the batch: handler, selection, total, `next` (items fed so far), done,
 *                                       failed, cancelled, state (running | cancelled | done), times
 *   <prefix>:rerun:b:<id>:items   LIST  the frozen selection: one JSON item per delivery, in feeding order
 *   <prefix>:rerun:b:<id>:open    SET   indexes fed whose run has not ended yet
 *   <prefix>:rerun:b:<id>:ended   HASH  index → how its run ended (`done`, `failed:<reason>`, `cancelled`)
 *   <prefix>:rerun:b:<id>:lease   STRING the process feeding the batch now (expires: another takes over)
 *
 * A batch's keys expire BATCH_KEEP_MS after it ended.
 */
export function rerunKeys(prefix: string) {
  return {
    batches: `${prefix}:rerun:batches`,
    running: `${prefix}:rerun:running`,
    meta: (batch: string) => `${prefix}:rerun:b:${batch}`,
    items: (batch: string) => `${prefix}:rerun:b:${batch}:items`,
    open: (batch: string) => `${prefix}:rerun:b:${batch}:open`,
    ended: (batch: string) => `${prefix}:rerun:b:${batch}:ended`,
    lease: (batch: string) => `${prefix}:rerun:b:${batch}:lease`,
  };
}

/** How long an ended batch stays readable (`rerun status`): 7 days. */
export const BATCH_KEEP_MS = 7 * 86_400_000;

/** The re-run id of item `index` of `batch` (its Idempotency-Keys and steps derive from it: src/worker). */
export const rerunRunId = (batch: string, index: number): string => `${batch}.${index}`;

/**
 * The job id of item `index` of `batch` (`r/<key>/<handler>/<batch>.<index>`, src/queue/jobs.ts): the same on
 * every feed, so a repeated feed adds nothing.
 */
export const itemJobId = (batch: string, index: number, key: string, handler: string): string =>
  rerunJobId(key, handler, rerunRunId(batch, index));

/** A batch id: `rr-` and a time-ordered, random tail (`rr-mb2x9k1c-4f7a`). */
export function newBatchId(now = Date.now(), random = Math.random): string {
  const tail = Math.floor(random() * 0x10000)
    .toString(16)
    .padStart(4, '0');
  return `rr-${now.toString(36)}-${tail}`;
}

/** A batch id as `newBatchId` makes them (checked before it names a Redis key). */
export const BATCH_ID = /^rr-[0-9a-z]+-[0-9a-f]{4}$/;
