import { DelayedError, Job, UnrecoverableError as BullmqUnrecoverableError, WaitingError, type Processor } from 'bullmq';
import type { Logger } from '../log/index.js';
import { type HandlerJobData, HANDLER_QUEUE_BY_PRIORITY, pauseHandlers, type HandlerQueues, type WaitStore } from '../queue/index.js';
import type { RedisClient } from '../redis/index.js';
import { PRIORITIES, type Priority } from '../util/index.js';
import type { HandlerJobDecision, HandlerJobView } from './handler-job.js';

/**
 * The handler processor's BullMQ side (the processor itself, ./processor.ts,
 * never touches BullMQ): a BullMQ job as the processor reads it, and the
 * decision it returns applied with BullMQ's job-moving calls (complete, retry,
 * delay, dead-letter, pause, park), the one place that knows them for handler
 * runs; and the promotion of a parked run an event woke. Flow control's own
 * BullMQ side is src/queue/flow-adapter.ts.
 */

export interface JobMoveDeps {
  /** The worker's command connection (the pause record). */
  readonly redis: RedisClient;
  /** The handler queues, paused together on an unusable token. */
  readonly queues: HandlerQueues;
  readonly prefix: string;
  /** The configured API token's hash (src/queue/pause.ts), kept with a pause: a restart with another token resumes. */
  readonly tokenHash: string | null;
  /** The waits' states, re-read once a waiting run is parked. */
  readonly waits: Pick<WaitStore, 'states'>;
  readonly log: Logger;
}

/**
 * The BullMQ processor of the handler queue of `priority`: the job as the processor reads it, the processor's
 * decision applied with BullMQ.
 */
export function handlerJobProcessor(
  priority: Priority,
  processJob: (job: HandlerJobView) => Promise<HandlerJobDecision>,
  deps: JobMoveDeps,
): Processor<HandlerJobData> {
  // Two parameters: BullMQ gives a processor that takes a third an AbortController per job, which nothing here
  // aborts (a run's ctx.signal fires on its timeout, made by the runner only for a handler that has one).
  return async (job: Job<HandlerJobData>, token?: string) => applyDecision(job, token, await processJob(jobView(job, priority)), deps);
}

/** A handler job as the processor reads it. */
function jobView(job: Job<HandlerJobData>, priority: Priority): HandlerJobView {
  return {
    id: String(job.id),
    data: job.data,
    timestamp: job.timestamp,
    attemptsMade: job.attemptsMade,
    attempts: job.opts.attempts ?? 1,
    queue: HANDLER_QUEUE_BY_PRIORITY[priority],
    ...(job.attemptsMade === 0 && job.processedOn && !job.data.parked
      ? { waitMs: job.processedOn - job.timestamp - (job.opts.delay ?? 0) }
      : {}),
    markParked: async () => {
      await job.updateData({ ...job.data, parked: true });
    },
  };
}

/** Applies the processor's decision with BullMQ: returns the job's result, or throws what makes BullMQ move it. */
async function applyDecision(job: Job<HandlerJobData>, token: string | undefined, decision: HandlerJobDecision, deps: JobMoveDeps) {
  switch (decision.kind) {
    case 'completed':
      return decision.result;
    case 'dead': {
      // Dead-lettered now, whatever BullMQ's count of attempts says; what the handler threw keeps its stack (`dlq show`).
      const dead = new BullmqUnrecoverableError(decision.reason);
      if (decision.error?.stack) dead.stack = `${dead.name}: ${decision.reason}\n  caused by ${decision.error.stack}`;
      throw dead;
    }
    case 'delay':
      await job.moveToDelayed(decision.until, token);
      throw new DelayedError();
    case 'pause': {
      const { reason, code, at } = decision;
      const first = await pauseHandlers(deps.redis, deps.queues, deps.prefix, { reason, code, at, tokenHash: deps.tokenHash });
      if (first) deps.log.error({ reason }, 'handler queues paused: every job is kept until they are resumed');
      await job.moveToWait(token);
      throw new WaitingError();
    }
    case 'retry':
      throw decision.error;
    case 'wait': {
      // Parked with BullMQ: delayed until due (BullMQ promotes it then; no waker of ours), no attempt spent,
      // no slot, no lock. An event that answered one of its waits after it registered and before this move
      // found the job active and could not promote it: re-read them now that it is delayed, and wake it.
      await job.moveToDelayed(decision.until, token);
      if (decision.waitIds.length > 0 && (await deps.waits.states(decision.waitIds)).some((st) => st !== null && st.status !== 'pending')) {
        await job.promote().catch(() => undefined);
      }
      throw new DelayedError();
    }
  }
}

/** Promotes a parked run (`<queue>|<job id>`); one that is not parked (running, gone) is left alone. */
export function parkedRunWaker(queues: HandlerQueues): (run: string) => Promise<void> {
  const queueByName = new Map<string, HandlerQueues[keyof HandlerQueues]>(
    PRIORITIES.map((p) => [HANDLER_QUEUE_BY_PRIORITY[p], queues[p]] as const),
  );
  return async (run: string): Promise<void> => {
    const at = run.indexOf('|');
    const queue = queueByName.get(run.slice(0, at));
    if (!queue) return;
    const job = await Job.fromId(queue, run.slice(at + 1));
    await job?.promote().catch(() => undefined);
  };
}
