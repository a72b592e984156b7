import { isSchedule, runsIn, type Schedule } from '../handler/index.js';
import { runInline } from '../replay/index.js';
import { scheduleHandler, scheduleRunJob } from '../sources/index.js';
import { MemoryStepStore, onAttempt, withVirtualWorkflow } from '../worker/index.js';
import { memoryLogger } from './memory-log.js';
import { testSettings } from './given-settings.js';
import { recordingSteps } from './steps.js';
import { runTarget, testCalls } from './target.js';
import type { TestScheduleOptions, TestScheduleOutcome, TestScheduleResult } from './types.js';
import { refusedWorkflow } from './workflow.js';
import { workspaceOption } from './workspace-option.js';

/** The tick `at` names (ms), or a TypeError saying what is expected. */
function tickOf(at: TestScheduleOptions['at']): number {
  if (at === undefined) return Date.now();
  const ms = at instanceof Date ? at.getTime() : typeof at === 'number' ? at : typeof at === 'string' ? Date.parse(at) : Number.NaN;
  if (!Number.isFinite(ms))
    throw new TypeError(`testSchedule: at must be a Date, an ISO time or ms since the epoch, got ${JSON.stringify(String(at))}`);
  return ms;
}

/**
 * Runs one schedule for one tick exactly as the worker does (the handlers'
 * runner with the schedule's timeout, its context with `ctx.tick`, its step
 * store and Idempotency-Keys, derived from `schedule:<id>:<tick ISO>`) against
 * an in-process sandbox that opens no port, or the API at `options.api`.
 *
 * A failing run does not throw: `outcome` says what the worker would do with
 * it (`retry` on a retryable failure, `dead` on the last attempt or a failure
 * never retried, `delay` on a 429). Throws a HandlerSettingsError for bad
 * settings and a TypeError for bad options.
 *
 * @example
 * const run = await testSchedule(dueToday, { at: '2025-03-03T08:00:00Z', settings: { DIGEST_HOURS: 24 } });
 * // run.outcome === 'completed'; run.calls: [{ method: 'GET', path: '/tasks', … }, { method: 'POST', path: '/tasks', … }]
 */
export async function testSchedule<S extends object>(
  schedule: Schedule<S>,
  options: TestScheduleOptions<S> = {},
): Promise<TestScheduleResult> {
  if (!isSchedule(schedule)) throw new TypeError('testSchedule: expected a schedule made by defineSchedule as the first argument');
  const attempt = options.attempt ?? 1;
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new TypeError(`testSchedule: attempt must be a positive integer, got ${String(attempt)}`);
  if (options.api && options.sandbox) throw new TypeError('testSchedule: give either api or sandbox, not both');
  const tickMs = tickOf(options.at);
  const workspace = workspaceOption('testSchedule', options.workspace);
  if (!runsIn(schedule, workspace)) {
    const named = (schedule.workspaces ?? []).join(', ');
    throw new TypeError(
      `testSchedule: schedule "${schedule.id}" runs only in ${named} (its workspaces), never in "${workspace}"; pass workspace: '${schedule.workspaces?.[0] ?? ''}'`,
    );
  }
  const settings = testSettings(schedule, options.settings, options.env ?? {}, 'testSchedule');
  // As in the worker, a schedule's run cannot sleep, wait or keep state: each is a HandlerConfigError (dead at once).
  const job = scheduleRunJob(schedule.id, tickMs);
  const wf = withVirtualWorkflow(scheduleHandler(schedule, job.receivedAt), () => ({
    workflow: refusedWorkflow(schedule.id),
    record: undefined,
  }));
  // A fresh sandbox's clock stands at the tick, as the API's would when the run starts.
  const { api, sandbox } = runTarget(options, options.at === undefined ? undefined : () => tickMs);
  const { log, lines } = memoryLogger(options.logLevel ?? 'info');
  const { store, steps } = recordingSteps(options.steps ?? new MemoryStepStore());
  const { outcome, calls } = await runInline(wf.handler, job, {
    api,
    steps: store,
    log,
    settings,
    signal: options.signal ?? new AbortController().signal,
    attempt,
    source: 'schedule',
    attempts: schedule.retry.attempts,
    workspace,
  });
  let result: TestScheduleOutcome = 'completed';
  let reason: string | undefined;
  if (!outcome.ok) {
    // The worker retries a schedule's run on an unusable token too (it pauses only the handler queues);
    // a retryable failure on the last allowed attempt is dead-lettered (the runner's rule, src/worker/classify.ts).
    const verdict =
      outcome.verdict.kind === 'pause'
        ? onAttempt({ kind: 'retry', reason: outcome.verdict.reason }, attempt, schedule.retry.attempts)
        : outcome.verdict;
    result = verdict.kind === 'pause' ? 'retry' : verdict.kind;
    reason = verdict.reason;
  }
  return {
    outcome: result,
    error: outcome.ok ? undefined : outcome.error,
    reason,
    calls: testCalls(calls),
    steps,
    logs: lines,
    tick: job.receivedAt,
    delivery: { key: job.key, receivedAt: job.receivedAt, attempt, source: 'schedule' },
    sandbox,
    waits: [],
  };
}
