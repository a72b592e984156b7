import {
  type Handler,
  type HandlerContext,
  type Schedule,
  type ScheduleContext,
  DEFAULT_RUN_POLICY,
  type HandlerSet,
  type HandlerWorkspace,
  runsIn,
} from '../../handler/index.js';
import { DEFAULT_WORKSPACE } from '../../config/index.js';
import type { Logger } from '../../log/index.js';
import { type HandlerJobData, scheduleKey, tickOf, type ScheduleJobView } from '../../queue/index.js';
import { type ContextDeps, type HandlerJobDecision, runHandler, onAttempt } from '../../worker/index.js';

export interface ScheduleProcessorDeps {
  readonly set: Pick<HandlerSet, 'current'>;
  readonly api: ContextDeps['api'];
  readonly steps: ContextDeps['steps'];
  readonly log: Logger;
  /** `ctx.workspace` of its runs: the workspace whose `schedules` queue this is (default `default`). */
  readonly workspace?: HandlerWorkspace | undefined;
}

/**
 * A schedule's run as a plain function: the schedule runs through the
 * handlers' runner (timeout, failure classification, logging) as a handler of
 * no event, with `ctx.tick` added; the decision is applied by the BullMQ
 * adapter (src/sources/schedule/schedule-timers.ts) like a handler job's.
 */
export function createScheduleProcessor(
  deps: ScheduleProcessorDeps,
): (job: ScheduleJobView, signal?: AbortSignal, observe?: ContextDeps['observe']) => Promise<HandlerJobDecision> {
  const workspace = deps.workspace?.id ?? DEFAULT_WORKSPACE;
  return async (job, signal, observe) => {
    const version = deps.set.current();
    const schedule = version.schedules.find((s) => s.id === job.data.scheduleId);
    if (!schedule) {
      // Its module is gone (the scheduler is removed when a worker starts without it): nothing to run.
      deps.log.warn({ schedule: job.data.scheduleId }, 'a run of a schedule no loaded module defines; skipped');
      return { kind: 'completed', result: { ms: 0 } };
    }
    if (!runsIn(schedule, workspace)) {
      // Its `workspaces` no longer names this one (the scheduler is removed when a worker starts so): nothing to run.
      deps.log.warn(
        { schedule: schedule.id, workspace, workspaces: schedule.workspaces },
        'a run of a schedule in a workspace it does not name; skipped',
      );
      return { kind: 'completed', result: { ms: 0 } };
    }
    const data = scheduleRunJob(schedule.id, tickOf(job));
    const { key } = data;
    const outcome = await runHandler(scheduleHandler(schedule, data.receivedAt), data, {
      api: deps.api,
      priority: schedule.priority,
      steps: deps.steps,
      log: deps.log,
      settings: version.settings.get(schedule.id) ?? {},
      signal: signal ?? new AbortController().signal,
      delivery: { key, receivedAt: data.receivedAt, attempt: job.attemptsMade + 1, source: 'schedule' },
      // The last attempt's retryable failure is dead, said so by the runner's log line and the history.
      attempts: job.attempts,
      observe,
      workspace: deps.workspace,
    });
    if (outcome.ok) return { kind: 'completed', result: { ms: Math.round(outcome.ms) } };
    // An unusable token pauses only the handler queues: a schedule's run is retried, and dead on its last attempt.
    const verdict =
      outcome.verdict.kind === 'pause'
        ? onAttempt({ kind: 'retry', reason: outcome.verdict.reason }, job.attemptsMade + 1, job.attempts)
        : outcome.verdict;
    const error = outcome.error instanceof Error ? outcome.error : undefined;
    switch (verdict.kind) {
      case 'dead':
        return { kind: 'dead', reason: verdict.reason, ...(error ? { error } : {}) };
      case 'delay':
        return { kind: 'delay', until: Date.now() + verdict.ms };
      case 'pause':
      case 'retry':
        return { kind: 'retry', error: error ?? new Error(verdict.reason) };
    }
  };
}

/**
 * The job a schedule's run for one tick goes through the handlers' runner with: key
 * `schedule:<id>:<tick ISO>` (its Idempotency-Keys and steps derive from it), received at the tick.
 */
export function scheduleRunJob(id: string, tickMs: number): HandlerJobData {
  return {
    key: scheduleKey(id, tickMs),
    handlerId: id,
    receivedAt: new Date(tickMs).toISOString(),
    // A schedule handles no event; the runner's log line names it `schedule`.
    event: { id: null, name: 'schedule' as HandlerJobData['event']['name'], createdAt: null, data: null },
  };
}

/** A schedule seen by the runner as a handler whose `handle` calls the schedule with `ctx.tick` (ISO). */
export function scheduleHandler(schedule: Schedule, tick: string): Handler {
  return {
    [Symbol.for('switchyard.handler')]: true,
    id: schedule.id,
    on: [],
    abilities: schedule.abilities,
    settings: schedule.settings,
    retry: schedule.retry,
    timeoutMs: schedule.timeoutMs,
    flow: { ...DEFAULT_RUN_POLICY, priority: schedule.priority },
    async handle(_event: unknown, ctx: HandlerContext<Readonly<Record<string, unknown>>>) {
      // The handler ctx's getters (api) stay lazy: `tick` is added on an object that inherits them.
      const scheduled = Object.create(ctx, { tick: { value: tick, enumerable: true } }) as ScheduleContext<
        Readonly<Record<string, unknown>>
      >;
      await schedule.handle(scheduled);
    },
  } as unknown as Handler;
}
