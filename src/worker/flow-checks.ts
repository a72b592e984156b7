import type { Handler } from '../handler/index.js';
import type { AttemptObserver } from '../lifecycle/index.js';
import type { HandlerJobData, OrderRef } from '../queue/index.js';
import type { ContextDeps } from './context.js';
import type { HandlerJobDecision, HandlerJobView, Processing, SkipReason } from './handler-job.js';

/**
 * The processor's checks before a handler runs: whether this process runs it
 * at all, its debounce burst, its turn in its key's order line, and its
 * handler's `skipStale` and `maxAge`. Each ends the job with a decision, or
 * lets the run go on with the data it runs with. A re-run (`switchyard rerun`)
 * passes none of them: see {@link rerunGoesOn}.
 */

/** How long an ordered run held for an earlier delivery's fan-out waits in its worker slot before it lets the slot go. */
export const HOLD_IN_PLACE_MS = 2_000;

/** How long a parked run of an ordered handler waits before it asks again, should its promotion be lost. */
export const PARKED_MS = 10 * 60_000;

/** How long a handler job may wait for a worker that runs its handler before it is dead-lettered. */
export const UNCLAIMED_MS = 60 * 60_000;

/** The flow checks passed: the data the run goes on with (a burst's latest event) and its burst, if debounced. */
export interface RunGoesOn {
  readonly kind: 'run';
  readonly data: HandlerJobData;
  readonly debounced: ContextDeps['debounced'];
}

/**
 * A job for a handler this process does not run (HANDLERS narrows it): put back for a worker that has it, and
 * dead-lettered with the reason once nobody has claimed it for UNCLAIMED_MS.
 */
export function unclaimed(p: Processing, job: HandlerJobView): HandlerJobDecision {
  const age = p.now() - job.timestamp;
  if (age > UNCLAIMED_MS) {
    return {
      kind: 'dead',
      reason: `no worker runs handler "${job.data.handlerId}" (narrowed out by HANDLERS everywhere, or its module was removed)`,
    };
  }
  if (!p.unclaimedWarned.has(job.data.handlerId)) {
    p.unclaimedWarned.add(job.data.handlerId);
    p.deps.log.warn({ handler: job.data.handlerId }, 'a job for a handler this process does not run; leaving it to a worker that does');
  }
  // Short at first and jittered (pools running different subsets hand such jobs back and forth until the
  // right one takes it), growing with the job's age to at most 5 s so an unclaimed job does not churn Redis.
  return { kind: 'delay', until: p.now() + Math.min(5_000, 100 + age / 20) + Math.floor(p.random() * 200) };
}

/** The debounce burst, the key's line, then maxAge: a decision that ends the job now, or the run going on. */
export async function flowChecks(
  p: Processing,
  job: HandlerJobView,
  handler: Handler,
  signal: AbortSignal | undefined,
  observe: AttemptObserver | undefined,
): Promise<HandlerJobDecision | RunGoesOn> {
  if (job.data.rerun) return rerunGoesOn(job.data);
  const flow = p.deps.flow;
  let data = job.data;
  let debounced: ContextDeps['debounced'] = null;
  if (data.debounce) {
    if (!flow) throw new Error('a debounced job reached a processor without debounce bookkeeping');
    const taken = await flow.take(handler.id, data.debounce, job.id);
    // Pushed back by a later event of the burst: run at the new due time, no attempt spent.
    if (taken.kind === 'wait') return { kind: 'delay', until: p.now() + taken.ms };
    if (taken.kind === 'gone') return skip(p, handler, data, 'burst_gone', 'debug', observe);
    data = { ...taken.burst.latest, debounce: data.debounce };
    debounced = { count: taken.burst.count, firstAt: new Date(taken.burst.firstAt).toISOString() };
    if (job.attemptsMade === 0) observe?.folded(taken.burst.count - 1);
  }
  const order = data.order;
  if (order) {
    const turn = await orderTurn(p, job, handler, { ...data, order }, signal, observe);
    if (turn) return turn;
  }
  const { maxAgeMs } = handler.flow;
  // A run resumed after a sleep or wait is as old as it slept: maxAge was checked at its first run.
  if (maxAgeMs !== null && !(data.parked || job.data.parked)) {
    const age = p.now() - eventTime(data);
    if (age > maxAgeMs) {
      if (order && flow) await flow.release({ ...data, order }, job.id, 'skipped');
      if (data.debounce && flow) await flow.finish(handler.id, data.debounce, job.id);
      return skip(p, handler, data, 'max_age', 'info', observe, { ageMs: Math.round(age), maxAgeMs });
    }
  }
  return { kind: 'run', data, debounced };
}

/**
 * A re-run is deliberate, so none of the checks that protect live deliveries from old or repeated work
 * applies: not maxAge (its event is old on purpose), not skipStale, not already_completed (it runs a
 * delivery that completed), not burst_gone. It takes no place in its key's order line and no debounce
 * burst (their bookkeeping is the live runs'): it runs its own delivery's event alone, so it neither
 * waits behind live runs of its key nor holds them up, nor folds a live event into its run.
 */
function rerunGoesOn(data: HandlerJobData): RunGoesOn {
  const { order: _order, debounce: _debounce, ...own } = data;
  return { kind: 'run', data: own, debounced: null };
}

/** An ordered run's turn in its key's line: null when it is its turn (and its event not stale), else what becomes of the job. */
async function orderTurn(
  p: Processing,
  job: HandlerJobView,
  handler: Handler,
  data: HandlerJobData & { order: OrderRef },
  signal: AbortSignal | undefined,
  observe: AttemptObserver | undefined,
): Promise<HandlerJobDecision | null> {
  const flow = p.deps.flow;
  if (!flow) throw new Error('an ordered job reached a processor without order bookkeeping');
  let claim = await flow.claim(data, job.id);
  // Held for an earlier delivery still being fanned out: usually a few milliseconds, so wait here
  // (keeping the slot) rather than go through the delayed set; after HOLD_IN_PLACE_MS, let go.
  for (let held = 0; claim.kind === 'hold' && held < HOLD_IN_PLACE_MS && !signal?.aborted;) {
    await p.sleep(claim.ms);
    held += claim.ms;
    claim = await flow.claim(data, job.id);
  }
  // Its worker died after the run released its key: the next run's job was added again.
  if (claim.kind === 'completed') return skip(p, handler, data, 'already_completed', 'debug', observe);
  // Another run of the key goes first: wait parked, without spending an attempt, until promoted
  // (or PARKED_MS, after which it simply asks again).
  if (claim.kind === 'park') return { kind: 'delay', until: p.now() + PARKED_MS };
  // A delivery received before this one is still being fanned out: it may be an earlier event of the key.
  if (claim.kind === 'hold') return { kind: 'delay', until: p.now() + claim.ms };
  if (handler.flow.skipStale && claim.lastAppliedAt !== null && data.order.at < claim.lastAppliedAt) {
    await flow.release(data, job.id, 'skipped');
    return skip(p, handler, data, 'stale', 'info', observe, { lastApplied: new Date(claim.lastAppliedAt).toISOString() });
  }
  return null;
}

/** Completes the job without running its handler, saying why (log and lifecycle). */
function skip(
  p: Processing,
  handler: Handler,
  data: HandlerJobData,
  reason: SkipReason,
  level: 'info' | 'debug',
  observe: AttemptObserver | undefined,
  extra: object = {},
): HandlerJobDecision {
  p.deps.log[level](
    { handler: handler.id, delivery: data.key, event: data.event.name, reason, ...extra },
    `run skipped: ${SKIP_TEXT[reason]}`,
  );
  observe?.skipped(reason, data.event.name);
  return { kind: 'completed', result: { ms: 0, skipped: reason } };
}

const SKIP_TEXT: Record<SkipReason, string> = {
  max_age: "the event is older than the handler's maxAge",
  stale: 'an event of the same key created later was already applied (skipStale)',
  already_completed: 'this run already completed (its worker stopped before recording it)',
  burst_gone: 'its debounce burst was already run',
};

/** The event's time: its creation, else its receipt (ms). */
export function eventTime(data: Pick<HandlerJobData, 'event' | 'receivedAt'> & { order?: OrderRef | undefined }): number {
  if (data.order) return data.order.at;
  const created = data.event.createdAt ? Date.parse(data.event.createdAt) : Number.NaN;
  return Number.isFinite(created) ? created : Date.parse(data.receivedAt);
}
