import { DelayedError, UnrecoverableError as BullmqUnrecoverableError, type Job } from 'bullmq';
import { type HandlerSet, type HandlerWorkspace, runsIn } from '../../handler/index.js';
import { DEFAULT_WORKSPACE } from '../../config/index.js';
import type { Logger } from '../../log/index.js';
import type { LifecycleBus, AttemptRef } from '../../lifecycle/index.js';
import { scheduleKey, tickOf, type ScheduleJobData, type ScheduleJobView, SCHEDULES_QUEUE } from '../../queue/index.js';
import type { ContextDeps, HandlerJobDecision, StepStore } from '../../worker/index.js';
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
  /** The worker's lifecycle stream: each run's attempts, their steps and API calls (history, metrics, tracing). */
  readonly lifecycle?: LifecycleBus | undefined;
  /** The workspace these timers serve (their runs' `ctx.workspace`); default `default`. */
  readonly workspace?: HandlerWorkspace | undefined;
}

/**
 * The schedules as a timed source on queue `schedules`: one job scheduler per
 * loaded schedule (its module gone, its scheduler removed), each run through
 * the schedule processor with the decision applied with BullMQ's calls as a
 * handler job's is. A run dead for good is kept, as a handler run is, until
 * `dlq retry` or `dlq purge`.
 */
export function scheduleTimers(deps: ScheduleTimersDeps): TimedSource {
  // A schedule naming workspaces has timers in those only; one naming none, in every workspace.
  const schedules = deps.set.current().schedules.filter((s) => runsIn(s, deps.workspace?.id ?? DEFAULT_WORKSPACE));
  const inner = createScheduleProcessor({ set: deps.set, api: deps.api, steps: deps.steps, log: deps.log, workspace: deps.workspace });
  const bus = deps.lifecycle;
  const process: ScheduleProcess = (job, signal) =>
    bus?.active ? bus.attempt(scheduleAttempt(job), (observe) => inner(job, signal, observe)) : inner(job, signal);
  return {
    queue: SCHEDULES_QUEUE,
    what: 'schedule run',
    timer: { noun: 'schedule', removed: 'no loaded module defines it any more' },
    timers: schedules.map((s) => ({
      id: s.id,
      repeat: repeatOptions(s),
      job: {
        name: s.id,
        data: { scheduleId: s.id },
        opts: { attempts: s.retry.attempts, backoff: { ...s.retry.backoff }, removeOnComplete: { count: 1_000 }, removeOnFail: false },
      },
    })),
    run:
      schedules.length === 0
        ? undefined
        : async (job: Job<ScheduleJobData>, token, signal) => {
            const decision = await process(
              {
                id: String(job.id),
                data: job.data,
                timestamp: job.timestamp,
                delay: job.opts.delay ?? 0,
                attemptsMade: job.attemptsMade,
                attempts: job.opts.attempts ?? 1,
              },
              signal,
            );
            switch (decision.kind) {
              case 'completed':
                return decision.result;
              case 'dead':
                throw new BullmqUnrecoverableError(decision.reason);
              case 'delay':
                await job.moveToDelayed(decision.until, token);
                throw new DelayedError();
              case 'retry':
                throw decision.error;
              case 'pause':
                throw new Error(decision.reason);
            }
          },
  };
}

/** A schedule's run for one tick as the lifecycle names its attempt: a delivery of its own, key `schedule:<id>:<tick ISO>`. */
function scheduleAttempt(job: ScheduleJobView): AttemptRef {
  const tick = tickOf(job);
  return {
    kind: 'schedule',
    queue: SCHEDULES_QUEUE,
    jobId: job.id,
    key: scheduleKey(job.data.scheduleId, tick),
    handler: job.data.scheduleId,
    event: 'schedule',
    number: job.attemptsMade + 1,
    attempts: job.attempts ?? 1,
    startedAt: Date.now(),
    traceparent: undefined,
    tick,
  };
}
