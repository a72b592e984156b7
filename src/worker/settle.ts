import type { Handler } from '../handler/index.js';
import type { AttemptObserver } from '../lifecycle/index.js';
import type { HandlerJobData, WaitState } from '../queue/index.js';
import { cancelId, matchKey, type DurableRun, type ParkedIn, type ParkRequest } from './durable.js';
import type { HandlerJobDecision, HandlerJobView, Processing } from './handler-job.js';
import type { DueCheck, PendingDelivery } from './hold.js';
import type { RunOutcome } from './runner.js';

/**
 * How a handler run's outcome is settled: parked (its cancelOn entries
 * registered, its record saved), cancelled, held at its due time, or decided
 * (completed, retry, delay, dead, pause), with what that means for its record,
 * its waits, its key's line and its burst. The decision goes back to the queue
 * adapter (./job-moves.ts); nothing here touches BullMQ.
 */

/** The durable part of a run (absent without durable deps), and the wait ids of its cancelOn entries. */
export interface DurablePart {
  readonly run: DurableRun;
  readonly cancels: readonly string[];
}

/** After the handler ran: parked when it asked to sleep or wait, else the decision its outcome gives. */
export async function settle(
  p: Processing,
  job: HandlerJobView,
  handler: Handler,
  data: HandlerJobData,
  durable: DurablePart | undefined,
  outcome: RunOutcome,
  observe: AttemptObserver | undefined,
): Promise<HandlerJobDecision> {
  const parked = durable?.run.parked ?? null;
  if (durable && parked) return park(p, job, handler, data, durable, parked, observe);
  const decision = decide(p.now, outcome);
  const dd = p.deps.durable;
  // Both sent at once, in this order, on the one worker connection (Redis runs them in that order): one round trip.
  const writes: Promise<void>[] = [];
  if (durable && dd && durable.run.durable) {
    // A run that parked before: keep what this attempt added (its writes, outcomes) and take it off the
    // list of parked runs (the record stays for dlq retry).
    writes.push(dd.records.save(durable.run.scope, durable.run.fresh, durable.run.keepFor(p.now()), null));
  }
  // Once a run is over for good its waits are forgotten, also those of a run that never parked (a wait
  // answered at its registration from the lookback keeps its state, event body included, until forgotten).
  if (
    durable &&
    dd &&
    (decision.kind === 'completed' || decision.kind === 'dead') &&
    (durable.run.durable || durable.run.waitIds.size > 0)
  ) {
    writes.push(dd.waits.forget([...durable.run.waitIds, ...durable.cancels]));
  }
  if (writes.length > 0) await Promise.all(writes);
  // What the run means for its key's line and its burst.
  const flow = p.deps.flow;
  const order = data.order;
  if (flow && order) {
    if (decision.kind === 'completed') await flow.release({ ...data, order }, job.id, 'completed');
    else if (decision.kind === 'dead') await flow.onDead({ id: job.id, data }, handler);
  }
  if (flow && data.debounce && decision.kind === 'completed') await flow.finish(handler.id, data.debounce, job.id);
  return decision;
}

/**
 * The run sleeps or waits (whatever the handler did after asking: the request stands). Its cancelOn
 * entries are registered (looking back to its own event's receipt: a cancelling event that came while
 * it ran counts) before it parks; one already answered cancels it now.
 */
async function park(
  p: Processing,
  job: HandlerJobView,
  handler: Handler,
  data: HandlerJobData,
  durable: DurablePart,
  parked: ParkRequest,
  observe: AttemptObserver | undefined,
): Promise<HandlerJobDecision> {
  const dd = p.deps.durable as NonNullable<Processing['deps']['durable']>;
  const { run } = durable;
  const queue = job.queue ?? 'handlers';
  const entries = await Promise.all(
    handler.workflow.cancelOn.map(async (c, i) => {
      const key = matchKey(c.match, data.event, `${handler.id}:${i}`);
      return key === null
        ? null
        : dd.waits.register({
            id: cancelId(run.scope, i),
            key,
            event: c.event,
            since: run.receivedMs,
            dueAt: null,
            run: `${queue}|${job.id}`,
            cancel: true,
          });
    }),
  );
  const hit = entries.find((st): st is WaitState => st?.status === 'cancelled');
  if (hit) return cancelled(p, job, handler, data, run, hit, observe);
  if (!(data.parked || job.data.parked)) await job.markParked?.();
  await dd.records.save(run.scope, run.fresh, run.keepFor(parked.dueAt), run.parkedEntry(parked, queue, job.id));
  p.deps.log.info(
    { handler: handler.id, delivery: data.key, wait: parked.name, kind: parked.kind, dueAt: new Date(parked.dueAt).toISOString() },
    'run parked',
  );
  // An ordered run that waits keeps its key's turn: it is not released, so later runs of its key stay
  // parked behind it until it completes (or is cancelled, or dead-lettered and released).
  return {
    kind: 'wait',
    until: parked.dueAt,
    name: parked.name,
    wait: parked.kind,
    waitIds: [...(parked.waitId ? [parked.waitId] : []), ...durable.cancels],
  };
}

/** Due, but a delivery received before its due time is not fanned out yet: parked again for a moment, no attempt spent. */
export async function held(
  p: Processing,
  job: HandlerJobView,
  handler: Handler,
  data: HandlerJobData,
  durable: DurableRun,
  h: Extract<DueCheck, { kind: 'hold' }>,
  observe: AttemptObserver | undefined,
): Promise<HandlerJobDecision> {
  const { parkedIn, pending } = h;
  if (parkedIn.heldSince === undefined) {
    // Its first hold: remembered in its record, so the cap counts from here across attempts and workers.
    const dd = p.deps.durable as NonNullable<Processing['deps']['durable']>;
    durable.holding(parkedIn.name, h.since);
    await dd.records.save(
      durable.scope,
      durable.fresh,
      durable.keepFor(parkedIn.dueAt),
      durable.parkedEntry(parkedIn, job.queue ?? 'handlers', job.id),
    );
  }
  observe?.wait({
    name: parkedIn.name,
    kind: parkedIn.kind,
    dueAt: parkedIn.dueAt,
    outcome: 'held',
    eventKey: pending.key,
    ...(parkedIn.event ? { event: parkedIn.event } : {}),
  });
  p.deps.log.debug(
    { ...heldFields(handler, data, parkedIn, pending), until: new Date(h.until).toISOString() },
    'run held at its due time: a delivery received before it is not fanned out yet',
  );
  return { kind: 'wait', until: h.until, name: parkedIn.name, wait: parkedIn.kind, waitIds: h.waitIds };
}

/** What the log says of a run held at its due time for a delivery not fanned out yet (or held past the cap). */
export function heldFields(handler: Handler, data: HandlerJobData, parkedIn: ParkedIn, pending: PendingDelivery) {
  return {
    handler: handler.id,
    delivery: data.key,
    wait: parkedIn.name,
    dueAt: new Date(parkedIn.dueAt).toISOString(),
    pending: pending.key,
    receivedAt: new Date(pending.at).toISOString(),
  };
}

/** A cancelOn event ended the run while it slept or waited: recorded `cancelled`, its key released, no further step. */
export async function cancelled(
  p: Processing,
  job: HandlerJobView,
  handler: Handler,
  data: HandlerJobData,
  durable: DurableRun,
  hit: WaitState,
  observe: AttemptObserver | undefined,
): Promise<HandlerJobDecision> {
  const dd = p.deps.durable as NonNullable<Processing['deps']['durable']>;
  const by = hit.match?.deliveryKey ?? '';
  observe?.wait({ name: 'cancelOn', kind: 'wait-for-event', dueAt: p.now(), outcome: 'cancelled', event: hit.event, eventKey: by });
  await dd.records.save(durable.scope, durable.fresh, durable.keepFor(p.now()), null);
  await dd.waits.forget([...durable.waitIds, ...handler.workflow.cancelOn.map((_, i) => cancelId(durable.scope, i))]);
  const flow = p.deps.flow;
  if (flow && data.order) await flow.release({ ...data, order: data.order }, job.id, 'completed');
  if (flow && data.debounce) await flow.finish(handler.id, data.debounce, job.id);
  p.deps.log.info({ handler: handler.id, delivery: data.key, event: hit.event, by }, 'run cancelled by a cancelOn event');
  return { kind: 'completed', result: { ms: 0, cancelled: by || hit.event } };
}

/** The runner's outcome as a decision: completed, or its verdict (dead, delay, pause, retry). */
function decide(now: () => number, outcome: RunOutcome): HandlerJobDecision {
  if (outcome.ok) return { kind: 'completed', result: { ms: Math.round(outcome.ms) } };
  const { verdict } = outcome;
  switch (verdict.kind) {
    case 'dead':
      return { kind: 'dead', reason: verdict.reason, ...(outcome.error instanceof Error ? { error: outcome.error } : {}) };
    case 'delay':
      // 429 and quota: wait without spending an attempt (the shared limiter decides when).
      return { kind: 'delay', until: now() + verdict.ms };
    case 'pause':
      return { kind: 'pause', reason: verdict.reason, code: verdict.code, at: new Date(now()).toISOString() };
    case 'retry':
      return { kind: 'retry', error: outcome.error instanceof Error ? outcome.error : new Error(verdict.reason) };
  }
}
