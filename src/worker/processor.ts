import type { Logger } from '../log/index.js';
import { jobIdFor } from '../events/index.js';
import type { Handler, HandlerSet } from '../handler/index.js';
import type { HandlerJobData, OrderRef, FlowControl, WaitState } from '../queue/index.js';
import type { ContextDeps } from './context.js';
import type { AttemptObserver, LifecycleBus, AttemptDecision, AttemptRef } from '../lifecycle/index.js';
import { runHandler, type RunOutcome } from './runner.js';
import { cancelId, DurableRun, matchKey, type DurableDeps } from './durable.js';
import { checkDue, type DueCheck } from './hold.js';
import { sleep as defaultSleep } from '../util/index.js';

/** The part of a `handlers` job the processor reads (a BullMQ Job has all of it). */
export interface HandlerJobView {
  /** The job id (part of the order and debounce bookkeeping). */
  readonly id: string;
  readonly data: HandlerJobData;
  /** Runs in all before the job is dead-lettered (its handler's `retry.attempts`). */
  readonly attempts: number;
  /** When the job was created (ms since epoch). */
  readonly timestamp: number;
  /** Attempts already spent before this one. */
  readonly attemptsMade: number;
  /** The queue it runs from (the lifecycle's attempt names it); default `handlers`. */
  readonly queue?: string;
  /** Its first run: how long it waited in its queue since it could run (ms). */
  readonly waitMs?: number;
  /** Marks the job's data `parked` (before its first park), so its later attempts load the run's record. */
  readonly markParked?: () => Promise<void>;
}

/**
 * What becomes of one `handlers` job; the queue adapter (src/runtime/worker.ts)
 * applies it with BullMQ. `delay` spends no attempt (a 429, a quota, or a job
 * handed back to a process that runs its handler); `retry` spends one and is
 * never the last attempt's decision: a retryable failure with no attempt left
 * is `dead` (the runner's verdict: `onAttempt` in classify.ts), so the queue adapter,
 * the history, the log and the metrics never need BullMQ's own count.
 */
export type HandlerJobDecision = AttemptDecision<SkipReason>;

/** Why a run was completed without running its handler. */
export type SkipReason = 'max_age' | 'stale' | 'already_completed' | 'burst_gone';

/**
 * What a run asks of flow control (src/queue/flow.ts): its turn in its key's line, its burst, its release, its death; a
 * due run, the oldest delivery not fanned out yet.
 */
export type FlowPorts = Pick<FlowControl, 'claim' | 'release' | 'take' | 'finish' | 'onDead'> & Partial<Pick<FlowControl, 'oldestPending'>>;

export interface HandlerProcessorDeps {
  /**
   * The handlers this process runs and their settings; replaceable while it runs (`switchyard dev`): each job reads the
   * current version once.
   */
  readonly set: Pick<HandlerSet, 'current'>;
  readonly api: ContextDeps['api'];
  readonly steps: ContextDeps['steps'];
  readonly log: Logger;
  /** The lifecycle stream: each attempt, its steps and API calls (metrics, history, tracing subscribe). */
  readonly lifecycle?: LifecycleBus | undefined;
  /** Needed by handlers with `orderBy` or `debounce` (their jobs carry `order` / `debounce`). */
  readonly flow?: FlowPorts | undefined;
  /** The clock (ms since epoch). */
  readonly now?: () => number;
  /** Jitter source in [0, 1). */
  readonly random?: () => number;
  /** Waits (the hold of an ordered run); default setTimeout. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Durable sleeps, waits, cancelOn and ctx.state (src/worker/durable.ts); absent: those calls throw. */
  readonly durable?: Omit<DurableDeps, 'now'> | undefined;
}

/** How long an ordered run held for an earlier delivery's fan-out waits in its worker slot before it lets the slot go. */
export const HOLD_IN_PLACE_MS = 2_000;

/** How long a parked run of an ordered handler waits before it asks again, should its promotion be lost. */
export const PARKED_MS = 10 * 60_000;

/** How long a handler job may wait for a worker that runs its handler before it is dead-lettered. */
export const UNCLAIMED_MS = 60 * 60_000;

/**
 * The `handlers` job processor as a plain function: runs the job's handler
 * (or hands the job back when this process does not run it) and decides what
 * becomes of the job. Knows nothing of BullMQ, so it is tested without it.
 */
export function createHandlerProcessor(
  deps: HandlerProcessorDeps,
): (job: HandlerJobView, signal?: AbortSignal) => Promise<HandlerJobDecision> {
  const now = deps.now ?? Date.now;
  const random = deps.random ?? Math.random;
  const sleep = deps.sleep ?? ((ms: number) => defaultSleep(ms));
  const unclaimedWarned = new Set<string>();
  const bus = deps.lifecycle;
  if (!bus) return (job, signal) => runJob(job, signal, undefined);
  return (job, signal) =>
    bus.active ? bus.attempt(attemptOf(job), (observe) => runJob(job, signal, observe)) : runJob(job, signal, undefined);

  async function runJob(
    job: HandlerJobView,
    signal: AbortSignal | undefined,
    observe: AttemptObserver | undefined,
  ): Promise<HandlerJobDecision> {
    // One version per job: a reload while it runs does not change what it runs with.
    const version = deps.set.current();
    const handler = version.handlers.get(job.data.handlerId);
    if (!handler) {
      // Run by another process (HANDLERS narrows this one): put it back for a worker that has it,
      // and dead-letter it with the reason once nobody has claimed it for UNCLAIMED_MS.
      const age = now() - job.timestamp;
      if (age > UNCLAIMED_MS) {
        return {
          kind: 'dead',
          reason: `no worker runs handler "${job.data.handlerId}" (narrowed out by HANDLERS everywhere, or its module was removed)`,
        };
      }
      if (!unclaimedWarned.has(job.data.handlerId)) {
        unclaimedWarned.add(job.data.handlerId);
        deps.log.warn({ handler: job.data.handlerId }, 'a job for a handler this process does not run; leaving it to a worker that does');
      }
      // Short at first and jittered (pools running different subsets hand such jobs back and forth until the
      // right one takes it), growing with the job's age to at most 5 s so an unclaimed job does not churn Redis.
      return { kind: 'delay', until: now() + Math.min(5_000, 100 + age / 20) + Math.floor(random() * 200) };
    }
    const flow = deps.flow;
    let data = job.data;
    let debounced: ContextDeps['debounced'] = null;
    if (data.debounce) {
      if (!flow) throw new Error('a debounced job reached a processor without debounce bookkeeping');
      const taken = await flow.take(handler.id, data.debounce, job.id);
      // Pushed back by a later event of the burst: run at the new due time, no attempt spent.
      if (taken.kind === 'wait') return { kind: 'delay', until: now() + taken.ms };
      if (taken.kind === 'gone') return skip(handler, data, 'burst_gone', 'debug', observe);
      data = { ...taken.burst.latest, debounce: data.debounce };
      debounced = { count: taken.burst.count, firstAt: new Date(taken.burst.firstAt).toISOString() };
      if (job.attemptsMade === 0) observe?.folded(taken.burst.count - 1);
    }
    const order = data.order;
    if (order) {
      if (!flow) throw new Error('an ordered job reached a processor without order bookkeeping');
      let claim = await flow.claim({ ...data, order }, job.id);
      // Held for an earlier delivery still being fanned out: usually a few milliseconds, so wait here
      // (keeping the slot) rather than go through the delayed set; after HOLD_IN_PLACE_MS, let go.
      for (let held = 0; claim.kind === 'hold' && held < HOLD_IN_PLACE_MS && !signal?.aborted;) {
        await sleep(claim.ms);
        held += claim.ms;
        claim = await flow.claim({ ...data, order }, job.id);
      }
      // Its worker died after the run released its key: the next run's job was added again.
      if (claim.kind === 'completed') return skip(handler, data, 'already_completed', 'debug', observe);
      // Another run of the key goes first: wait parked, without spending an attempt, until promoted
      // (or PARKED_MS, after which it simply asks again).
      if (claim.kind === 'park') return { kind: 'delay', until: now() + PARKED_MS };
      // A delivery received before this one is still being fanned out: it may be an earlier event of the key.
      if (claim.kind === 'hold') return { kind: 'delay', until: now() + claim.ms };
      if (handler.flow.skipStale && claim.lastAppliedAt !== null && order.at < claim.lastAppliedAt) {
        await flow.release({ ...data, order }, job.id, 'skipped');
        return skip(handler, data, 'stale', 'info', observe, { lastApplied: new Date(claim.lastAppliedAt).toISOString() });
      }
    }
    const { maxAgeMs } = handler.flow;
    // A run resumed after a sleep or wait is as old as it slept: maxAge was checked at its first run.
    if (maxAgeMs !== null && !(data.parked || job.data.parked)) {
      const age = now() - eventTime(data);
      if (age > maxAgeMs) {
        if (order && flow) await flow.release({ ...data, order }, job.id, 'skipped');
        if (data.debounce && flow) await flow.finish(handler.id, data.debounce, job.id);
        return skip(handler, data, 'max_age', 'info', observe, { ageMs: Math.round(age), maxAgeMs });
      }
    }
    // The durable part of the run: its record when it parked before (a resumed or retried run).
    const dd = deps.durable;
    const queue = job.queue ?? 'handlers';
    const durable = dd
      ? new DurableRun(
          { ...dd, now },
          handler,
          data,
          `${queue}|${job.id}`,
          data.parked || job.data.parked ? await dd.records.load(jobScope(data, handler.id)) : new Map(),
          observe,
        )
      : undefined;
    const cancels =
      durable && handler.workflow.cancelOn.length > 0 ? handler.workflow.cancelOn.map((_, i) => cancelId(durable.scope, i)) : [];
    if (durable && dd && (data.parked || job.data.parked)) {
      // Cancelled while it slept or waited (cancelOn): no further step runs. Due, but a delivery accepted before
      // its due time is not fanned out yet: held (src/worker/hold.ts).
      const due = await checkDue(durable, cancels, {
        oldestPending: async () => (await flow?.oldestPending?.()) ?? null,
        states: (ids) => dd.waits.states(ids),
        now: now(),
        ...(dd.holdMaxMs === undefined ? {} : { maxMs: dd.holdMaxMs }),
      });
      if (due.kind === 'cancelled') return cancelled(job, handler, data, durable, due.hit, observe);
      if (due.kind === 'hold') return held(job, handler, data, durable, due, observe);
      if (due.overdue) {
        const { parkedIn, pending, heldMs } = due.overdue;
        deps.log.warn(
          {
            handler: handler.id,
            delivery: data.key,
            wait: parkedIn.name,
            dueAt: new Date(parkedIn.dueAt).toISOString(),
            pending: pending.key,
            receivedAt: new Date(pending.at).toISOString(),
            heldMs,
          },
          'run held past its due time for the longest allowed: it goes on now, ' +
            'though a delivery received before its due time is still not fanned out (workers behind, or the delivery lost); ' +
            'that delivery cannot answer it any more',
        );
      }
    }
    const outcome = await runHandler(handler, data, {
      api: deps.api,
      priority: data.source === 'reconcile' ? 'low' : handler.flow.priority,
      steps: deps.steps,
      log: deps.log,
      settings: version.settings.get(handler.id) ?? {},
      signal,
      delivery: { key: data.key, receivedAt: data.receivedAt, attempt: job.attemptsMade + 1, source: data.source ?? 'webhook' },
      attempts: job.attempts,
      debounced,
      observe,
      durable,
    });
    const parked = durable?.parked ?? null;
    observe?.ran({ event: data.event.name, outcome: parked ? 'wait' : outcome.ok ? 'completed' : outcome.verdict.kind, ms: outcome.ms });
    if (durable && dd && parked) {
      // The run sleeps or waits (whatever the handler did after asking: the request stands). Its cancelOn
      // entries are registered (looking back to its own event's receipt: a cancelling event that came while
      // it ran counts) before it parks; one already answered cancels it now.
      const entries = await Promise.all(
        handler.workflow.cancelOn.map(async (c, i) => {
          const key = matchKey(c.match, data.event, `${handler.id}:${i}`);
          return key === null
            ? null
            : dd.waits.register({
                id: cancelId(durable.scope, i),
                key,
                event: c.event,
                since: durable.receivedMs,
                dueAt: null,
                run: `${queue}|${job.id}`,
                cancel: true,
              });
        }),
      );
      const hit = entries.find((st): st is WaitState => st?.status === 'cancelled');
      if (hit) return cancelled(job, handler, data, durable, hit, observe);
      if (!(data.parked || job.data.parked)) await job.markParked?.();
      await dd.records.save(durable.scope, durable.fresh, durable.keepFor(parked.dueAt), durable.parkedEntry(parked, queue, job.id));
      deps.log.info(
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
        waitIds: [...(parked.waitId ? [parked.waitId] : []), ...cancels],
      };
    }
    const decision = decide(outcome);
    // Both sent at once, in this order, on the one worker connection (Redis runs them in that order): one round trip.
    const writes: Promise<void>[] = [];
    if (durable && dd && durable.durable) {
      // A run that parked before: keep what this attempt added (its writes, outcomes) and take it off the
      // list of parked runs (the record stays for dlq retry).
      writes.push(dd.records.save(durable.scope, durable.fresh, durable.keepFor(now()), null));
    }
    // Once a run is over for good its waits are forgotten, also those of a run that never parked (a wait
    // answered at its registration from the lookback keeps its state, event body included, until forgotten).
    if (durable && dd && (decision.kind === 'completed' || decision.kind === 'dead') && (durable.durable || durable.waitIds.size > 0)) {
      writes.push(dd.waits.forget([...durable.waitIds, ...cancels]));
    }
    await Promise.all(writes);
    // What the run means for its key's line and its burst.
    if (flow && order) {
      if (decision.kind === 'completed') await flow.release({ ...data, order }, job.id, 'completed');
      else if (decision.kind === 'dead') await flow.onDead({ id: job.id, data }, handler);
    }
    if (flow && data.debounce && decision.kind === 'completed') await flow.finish(handler.id, data.debounce, job.id);
    return decision;
  }

  /** Due, but a delivery received before its due time is not fanned out yet: parked again for a moment, no attempt spent. */
  async function held(
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
      const dd = deps.durable as NonNullable<typeof deps.durable>;
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
    deps.log.debug(
      {
        handler: handler.id,
        delivery: data.key,
        wait: parkedIn.name,
        dueAt: new Date(parkedIn.dueAt).toISOString(),
        pending: pending.key,
        receivedAt: new Date(pending.at).toISOString(),
        until: new Date(h.until).toISOString(),
      },
      'run held at its due time: a delivery received before it is not fanned out yet',
    );
    return { kind: 'wait', until: h.until, name: parkedIn.name, wait: parkedIn.kind, waitIds: h.waitIds };
  }

  /** A cancelOn event ended the run while it slept or waited: recorded `cancelled`, its key released, no further step. */
  async function cancelled(
    job: HandlerJobView,
    handler: Handler,
    data: HandlerJobData,
    durable: DurableRun,
    hit: WaitState,
    observe: AttemptObserver | undefined,
  ): Promise<HandlerJobDecision> {
    const dd = deps.durable as NonNullable<typeof deps.durable>;
    const by = hit.match?.deliveryKey ?? '';
    observe?.wait({ name: 'cancelOn', kind: 'wait-for-event', dueAt: now(), outcome: 'cancelled', event: hit.event, eventKey: by });
    await dd.records.save(durable.scope, durable.fresh, durable.keepFor(now()), null);
    await dd.waits.forget([...durable.waitIds, ...handler.workflow.cancelOn.map((_, i) => cancelId(durable.scope, i))]);
    const flow = deps.flow;
    if (flow && data.order) await flow.release({ ...data, order: data.order }, job.id, 'completed');
    if (flow && data.debounce) await flow.finish(handler.id, data.debounce, job.id);
    deps.log.info({ handler: handler.id, delivery: data.key, event: hit.event, by }, 'run cancelled by a cancelOn event');
    return { kind: 'completed', result: { ms: 0, cancelled: by || hit.event } };
  }

  function skip(
    handler: Handler,
    data: HandlerJobData,
    reason: SkipReason,
    level: 'info' | 'debug',
    observe: AttemptObserver | undefined,
    extra: object = {},
  ): HandlerJobDecision {
    deps.log[level](
      { handler: handler.id, delivery: data.key, event: data.event.name, reason, ...extra },
      `run skipped: ${SKIP_TEXT[reason]}`,
    );
    observe?.skipped(reason, data.event.name);
    return { kind: 'completed', result: { ms: 0, skipped: reason } };
  }

  function decide(outcome: RunOutcome): HandlerJobDecision {
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
}

/** The scope of a run (its steps, its record): its job id as fan-out made it. */
function jobScope(data: HandlerJobData, handlerId: string): string {
  return jobIdFor(data.key, handlerId);
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
    ...(job.waitMs !== undefined ? { waitMs: job.waitMs } : {}),
  };
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
