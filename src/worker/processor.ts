import type { Handler, HandlerSnapshot } from '../handler/index.js';
import type { HandlerJobData } from '../queue/index.js';
import type { AttemptObserver, AttemptRef } from '../lifecycle/index.js';
import { runHandler, type RunOutcome } from './runner.js';
import { runWorkspace, type ContextDeps } from './context.js';
import { cancelId, DurableRun } from './durable.js';
import { checkDue } from './hold.js';
import { runScope } from './derived-keys.js';
import { sleep as defaultSleep } from '../util/index.js';
import type { HandlerJobDecision, HandlerJobView, HandlerProcessorDeps, Processing } from './handler-job.js';
import { flowChecks, unclaimed } from './flow-checks.js';
import { cancelled, held, heldFields, settle, type DurablePart } from './settle.js';

export type { FlowPorts, HandlerJobDecision, HandlerJobView, HandlerProcessorDeps, SkipReason } from './handler-job.js';

/**
 * The `handlers` job processor as a plain function: runs the job's handler
 * (or hands the job back when this process does not run it) and decides what
 * becomes of the job. Knows nothing of BullMQ, so it is tested without it.
 * A run goes through three steps: the flow checks (./flow-checks.ts), the run
 * (a resumed run's due check first, then the runner), and the settling of its
 * outcome (./settle.ts).
 */
export function createHandlerProcessor(
  deps: HandlerProcessorDeps,
): (job: HandlerJobView, signal?: AbortSignal) => Promise<HandlerJobDecision> {
  const now = deps.now ?? Date.now;
  const p: Processing = {
    deps,
    now,
    random: deps.random ?? Math.random,
    sleep: deps.sleep ?? ((ms: number) => defaultSleep(ms)),
    unclaimedWarned: new Set<string>(),
    durableDeps: deps.durable ? { ...deps.durable, now } : undefined,
    workspace: runWorkspace(deps.workspace?.id),
  };
  const bus = deps.lifecycle;
  if (!bus) return (job, signal) => runJob(p, job, signal, undefined);
  return (job, signal) =>
    bus.active ? bus.attempt(attemptOf(job), (observe) => runJob(p, job, signal, observe)) : runJob(p, job, signal, undefined);
}

async function runJob(
  p: Processing,
  job: HandlerJobView,
  signal: AbortSignal | undefined,
  observe: AttemptObserver | undefined,
): Promise<HandlerJobDecision> {
  // One version per job: a reload while it runs does not change what it runs with.
  const version = p.deps.set.current();
  const handler = version.handlers.get(job.data.handlerId);
  if (!handler) return unclaimed(p, job);
  const checked = await flowChecks(p, job, handler, signal, observe);
  if (checked.kind !== 'run') return checked;
  const { data, debounced } = checked;
  // The durable part of the run: its record when it parked before (a resumed or retried run).
  const durable = await durablePart(p, job, handler, data, observe);
  if (durable && (data.parked || job.data.parked)) {
    const due = await dueCheck(p, job, handler, data, durable, observe);
    if (due) return due;
  }
  const outcome = await run(p, job, handler, data, { version, signal, debounced, observe, durable: durable?.run });
  return settle(p, job, handler, data, durable, outcome, observe);
}

/** The run's durable part (undefined without durable deps): its record loaded when it parked before, its cancelOn ids. */
async function durablePart(
  p: Processing,
  job: HandlerJobView,
  handler: Handler,
  data: HandlerJobData,
  observe: AttemptObserver | undefined,
): Promise<DurablePart | undefined> {
  const dd = p.durableDeps;
  if (!dd) return undefined;
  const run = new DurableRun(
    dd,
    handler,
    data,
    `${job.queue ?? 'handlers'}|${job.id}`,
    data.parked || job.data.parked ? await dd.records.load(runScope(data, handler.id)) : new Map(),
    observe,
  );
  const cancels = handler.workflow.cancelOn.length > 0 ? handler.workflow.cancelOn.map((_, i) => cancelId(run.scope, i)) : [];
  return { run, cancels };
}

/**
 * A resumed run: cancelled while it slept or waited (cancelOn), so no further step runs; or due, but a delivery
 * accepted before its due time is not fanned out yet, so held (src/worker/hold.ts); else null, and it runs.
 */
async function dueCheck(
  p: Processing,
  job: HandlerJobView,
  handler: Handler,
  data: HandlerJobData,
  durable: DurablePart,
  observe: AttemptObserver | undefined,
): Promise<HandlerJobDecision | null> {
  const dd = p.deps.durable as NonNullable<Processing['deps']['durable']>;
  const due = await checkDue(durable.run, durable.cancels, {
    oldestPending: async () => (await p.deps.flow?.oldestPending?.()) ?? null,
    states: (ids) => dd.waits.states(ids),
    now: p.now(),
    ...(dd.holdMaxMs === undefined ? {} : { maxMs: dd.holdMaxMs }),
  });
  if (due.kind === 'cancelled') return cancelled(p, job, handler, data, durable.run, due.hit, observe);
  if (due.kind === 'hold') return held(p, job, handler, data, durable.run, due, observe);
  if (due.overdue) {
    const { parkedIn, pending, heldMs } = due.overdue;
    p.deps.log.warn(
      { ...heldFields(handler, data, parkedIn, pending), heldMs },
      'run held past its due time for the longest allowed: it goes on now, ' +
        'though a delivery received before its due time is still not fanned out (workers behind, or the delivery lost); ' +
        'that delivery cannot answer it any more',
    );
  }
  return null;
}

/** What one run is given besides its job, handler and data. */
interface RunInputs {
  readonly version: HandlerSnapshot;
  readonly signal: AbortSignal | undefined;
  readonly debounced: ContextDeps['debounced'];
  readonly observe: AttemptObserver | undefined;
  readonly durable: DurableRun | undefined;
}

/** Runs the handler (src/worker/runner.ts) and reports the run to the attempt's observer. */
async function run(p: Processing, job: HandlerJobView, handler: Handler, data: HandlerJobData, r: RunInputs): Promise<RunOutcome> {
  const outcome = await runHandler(handler, data, {
    // A re-run (`switchyard rerun`) spends the re-runs' own share of the API budget (RERUN_SHARE).
    api: data.rerun ? (p.deps.rerunApi ?? p.deps.api) : p.deps.api,
    // A reconciled delivery and a re-run yield to live traffic.
    priority: data.source === 'reconcile' || data.rerun ? 'low' : handler.flow.priority,
    steps: p.deps.steps,
    log: p.deps.log,
    settings: r.version.settings.get(handler.id) ?? {},
    signal: r.signal,
    delivery: { key: data.key, receivedAt: data.receivedAt, attempt: job.attemptsMade + 1, source: data.source ?? 'webhook' },
    attempts: job.attempts,
    debounced: r.debounced,
    observe: r.observe,
    durable: r.durable,
    workspace: p.workspace,
  });
  const parked = r.durable?.parked ?? null;
  r.observe?.ran({ event: data.event.name, outcome: parked ? 'wait' : outcome.ok ? 'completed' : outcome.verdict.kind, ms: outcome.ms });
  return outcome;
}

/** A handler job's attempt as the lifecycle names it. */
function attemptOf(job: HandlerJobView): AttemptRef {
  const { data } = job;
  return {
    kind: 'handler',
    queue: job.queue ?? 'handlers',
    jobId: job.id,
    key: data.key,
    handler: data.handlerId,
    event: data.event.name,
    number: job.attemptsMade + 1,
    attempts: job.attempts,
    startedAt: Date.now(),
    traceparent: data.traceparent,
    ...(data.rerun ? { rerun: data.rerun } : {}),
    ...(job.waitMs !== undefined ? { waitMs: job.waitMs } : {}),
  };
}
