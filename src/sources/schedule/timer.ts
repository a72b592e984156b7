import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { HandlerSet } from '../../handler/set.js';
import type { Logger } from '../../log/logger.js';
import type { ScheduleJobData, ScheduleJobView } from '../../queue/jobs.js';
import { SCHEDULES_QUEUE } from '../../queue/names.js';
import type { ContextDeps } from '../../worker/context.js';
import type { HandlerJobDecision } from '../../worker/processor.js';
import type { StepStore } from '../../worker/steps.js';
import type { TimedSource } from '../timers.js';
import { createScheduleProcessor } from './processor.js';
import { repeatOptions } from './repeat.js';

/** A schedule's run as a plain function (src/sources/schedule/processor.ts). */
export type ScheduleProcess = (job: ScheduleJobView, signal?: AbortSignal) => Promise<HandlerJobDecision>;

export interface ScheduleTimersDeps {
  readonly set: HandlerSet;
  readonly api: ContextDeps['api'];
  readonly steps: StepStore;
  readonly log: Logger;
  /** Wraps each run (the delivery history's observer of schedule runs). */
  readonly observe?: (inner: ScheduleProcess) => ScheduleProcess;
}

/**
 * The schedules as a timed source on queue `schedules`: one job scheduler per
 * loaded schedule (its module gone, its scheduler removed), each run through
 * the schedule processor with the decision applied with BullMQ's calls as a
 * handler job's is. A run dead for good is kept, as a handler run is, until
 * `dlq retry` or `dlq purge`.
 */
export function scheduleTimers(deps: ScheduleTimersDeps): TimedSource {
  const { schedules } = deps.set.current();
  const inner = createScheduleProcessor({ set: deps.set, api: deps.api, steps: deps.steps, log: deps.log });
  const process = deps.observe?.(inner) ?? inner;
  return {
    queue: SCHEDULES_QUEUE,
    what: 'schedule run',
    timer: { noun: 'schedule', removed: 'no loaded module defines it any more' },
    timers: schedules.map((s) => ({
      id: s.id,
      repeat: repeatOptions(s),
      job: { name: s.id, data: { scheduleId: s.id }, opts: { attempts: s.retry.attempts, backoff: { ...s.retry.backoff }, removeOnComplete: { count: 1_000 }, removeOnFail: false } },
    })),
    run: schedules.length === 0 ? undefined : async (job: Job<ScheduleJobData>, token, signal) => {
      const decision = await process({
        id: String(job.id), data: job.data, timestamp: job.timestamp, delay: job.opts.delay ?? 0, attemptsMade: job.attemptsMade, attempts: job.opts.attempts ?? 1,
      }, signal);
      switch (decision.kind) {
        case 'completed': return decision.result;
        case 'dead': throw new UnrecoverableError(decision.reason);
        case 'delay':
          await job.moveToDelayed(decision.until, token);
          throw new DelayedError();
        case 'retry': throw decision.error;
        case 'pause': throw new Error(decision.reason);
      }
    },
  };
}
