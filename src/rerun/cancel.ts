import { Queue } from 'bullmq';
import { HANDLER_QUEUE_BY_PRIORITY } from '../queue/index.js';
import { rerunStatus, UnknownBatchError, type BatchState, type RerunStatus } from './batch.js';
import type { RerunDeps } from './deps.js';
import { BATCH_ID, rerunKeys } from './keys.js';
import { RERUN_SCRIPTS } from './scripts.js';
import { trackBatch } from './track.js';

/** What a cancel did. */
export interface CancelledRerun {
  /** The batch's state before: only a `running` batch is cancelled. */
  readonly before: BatchState;
  /** The batch after: `done` runs, `failed`, `cancelled` (removed before they started), `open` (running: they finish). */
  readonly status: RerunStatus;
}

/**
 * Cancels a batch: it is fed no more and its runs not started are removed (now, and by the feeders'
 * next look at it, for a run a feeder was adding meanwhile); runs already started finish. Cancelling a
 * batch that ended changes nothing.
 */
export async function cancelRerun(deps: Pick<RerunDeps, 'redis' | 'prefix' | 'by' | 'now'>, batch: string): Promise<CancelledRerun> {
  if (!BATCH_ID.test(batch)) throw new UnknownBatchError(batch);
  const keys = rerunKeys(deps.prefix);
  const now = (deps.now ?? Date.now)();
  const before = (await RERUN_SCRIPTS.on(deps.redis).rerunCancel([keys.meta(batch)], [now, deps.by ?? ''])) as BatchState | null;
  if (before === null) throw new UnknownBatchError(batch);
  if (before === 'running' || before === 'cancelling') {
    const queue = new Queue(HANDLER_QUEUE_BY_PRIORITY.low, { connection: deps.redis, prefix: deps.prefix });
    try {
      await trackBatch({ redis: deps.redis, prefix: deps.prefix, queue, ...(deps.now ? { now: deps.now } : {}) }, batch);
    } finally {
      await queue.close();
    }
  }
  return { before, status: await rerunStatus(deps, batch) };
}
