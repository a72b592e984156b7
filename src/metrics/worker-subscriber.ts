import type { LifecycleSubscriber, ApiCallFacts, RunReport, WaitEvent } from '../lifecycle/index.js';
import type { MetricSet } from './definitions.js';
import { safeLabel, statusLabel } from './labels.js';

/** Where the last known pause state is kept when no Redis is available to read it on scrape. */
export interface PauseFlag {
  paused: boolean;
}

/** What the worker's series record, one recorder each (fed by {@link workerSubscriber}; tests call them directly). */
export interface WorkerRecorder {
  onHandler?: (report: { handler: string; event: string; outcome: RunReport['outcome']; ms: number }) => void;
  onApiCall?: (event: ApiCallFacts) => void;
  onPause?: (reason: string | null) => void;
  /** A worker started a handler job that had waited `waitMs` in the queue of its priority since it could run. */
  onStart?: (report: { handler: string; priority: string; waitMs: number }) => void;
  /** A run completed without running its handler (maxAge, skipStale, …). */
  onSkipped?: (report: { handler: string; event: string; reason: string }) => void;
  /** A debounced run took its burst: `folded` events were folded into the one it runs. */
  onDebounced?: (report: { handler: string; folded: number }) => void;
  /** A valid delivery was fanned out (`duplicate`: another delivery of its change ran, so no handler runs). */
  onDispatched?: (report: { event: string; source: string; duplicate: boolean }) => void;
  /**
   * A durable sleep or wait began (`begun`) or ended (`due`, `event`, `timeout`, `cancelled`). `latenessMs`: for a
   * run woken by its due time (parked in an earlier attempt), how long after that time it resumed.
   */
  onWait?: (report: {
    handler: string;
    kind: WaitEvent['kind'];
    outcome: NonNullable<WaitEvent['outcome']> | 'begun';
    latenessMs?: number;
  }) => void;
}

/** The priority a handler queue serves (`handlers-high` → high). */
function priorityOf(queue: string): string {
  const dash = queue.indexOf('-');
  return dash < 0 ? 'normal' : queue.slice(dash + 1);
}

/**
 * The worker's metrics as a subscriber of its lifecycle stream: handler runs, skips and
 * debounce folds from each attempt's end, queue wait from a handler job's
 * first start, API calls (the poller's too), dispatches from fan-out, and the
 * pause flag from an attempt that paused the handler queues.
 */
export function workerSubscriber(record: WorkerRecorder, now: () => number = Date.now): LifecycleSubscriber {
  /** The sleeps and waits begun in each running attempt (by job id): one that ends in the attempt it began in was no wake-up. */
  const begun = new Map<string, Set<string>>();
  return {
    wait: (e) => {
      const handler = e.attempt.handler;
      const mine = begun.get(e.attempt.jobId);
      if (e.outcome === undefined) {
        if (mine) mine.add(e.name);
        else begun.set(e.attempt.jobId, new Set([e.name]));
        record.onWait?.({ handler, kind: e.kind, outcome: 'begun' });
        return;
      }
      const woken = (e.outcome === 'due' || e.outcome === 'timeout') && !mine?.has(e.name);
      record.onWait?.({ handler, kind: e.kind, outcome: e.outcome, ...(woken ? { latenessMs: Math.max(0, now() - e.dueAt) } : {}) });
    },
    'attempt-started': ({ attempt }) => {
      if (attempt.waitMs !== undefined)
        record.onStart?.({ handler: attempt.handler, priority: priorityOf(attempt.queue), waitMs: attempt.waitMs });
    },
    'attempt-ended': (e) => {
      begun.delete(e.attempt.jobId);
      const handler = e.attempt.handler;
      if (e.folded !== undefined) record.onDebounced?.({ handler, folded: e.folded });
      if (e.skipped) record.onSkipped?.({ handler, event: e.skipped.event, reason: e.skipped.reason });
      if (e.run && e.attempt.kind === 'handler') record.onHandler?.({ handler, event: e.run.event, outcome: e.run.outcome, ms: e.run.ms });
      if (e.ok && e.decision.kind === 'pause' && e.attempt.kind === 'handler') record.onPause?.(e.decision.reason);
    },
    'api-call': ({ call }) => record.onApiCall?.(call),
    'fanned-out': (e) => {
      if (e.ok)
        record.onDispatched?.({
          event: e.delivery.name ?? 'unknown',
          source: e.delivery.source,
          duplicate: e.duplicateChange !== undefined,
        });
    },
  };
}

/** The recorders of the handler, API, wait, dispatch and pause series of one workspace (its `workspace` label). */
export function workerRecorder(m: MetricSet, pause: PauseFlag, workspace: string): WorkerRecorder {
  return {
    onHandler({ handler, event, outcome, ms }): void {
      const labels = { handler: safeLabel(handler), event: safeLabel(event), outcome: safeLabel(outcome), workspace };
      m.handlerRuns.inc(labels);
      m.handlerDuration.observe(labels, ms / 1000);
    },
    onApiCall(e: ApiCallFacts): void {
      const op = safeLabel(e.op);
      m.apiCalls.inc({ op, status: statusLabel(e.status, e.error?.code), workspace });
      // A call refused locally (status 0, 0 ms) sent nothing: no duration to record.
      if (e.status > 0 || e.durationMs > 0) m.apiDuration.observe({ op, workspace }, e.durationMs / 1000);
      m.rateLimitWait.observe({ priority: safeLabel(e.priority), workspace }, e.rateLimitWaitMs / 1000);
      if (e.status === 429) m.rateLimited.inc({ op, workspace });
      if (e.quotaRemaining !== undefined) m.quotaRemaining().set({ workspace }, e.quotaRemaining);
    },
    onStart({ priority, waitMs }): void {
      m.queueWait.observe({ priority: safeLabel(priority), workspace }, Math.max(0, waitMs) / 1000);
    },
    onSkipped({ handler, event, reason }): void {
      m.handlerSkipped.inc({ handler: safeLabel(handler), event: safeLabel(event), reason: safeLabel(reason), workspace });
    },
    onDebounced({ handler, folded }): void {
      if (folded > 0) m.debounced.inc({ handler: safeLabel(handler), workspace }, folded);
    },
    onWait({ handler, kind, outcome, latenessMs }): void {
      m.waits.inc({ handler: safeLabel(handler), kind, outcome, workspace });
      if (latenessMs !== undefined) m.waitLateness.observe({ kind, workspace }, latenessMs / 1000);
    },
    onDispatched({ event, source, duplicate }): void {
      m.dispatched.inc({
        event: safeLabel(event),
        source: safeLabel(source),
        outcome: duplicate ? 'duplicate_change' : 'dispatched',
        workspace,
      });
    },
    onPause(reason: string | null): void {
      pause.paused = reason !== null;
    },
  };
}
