import type { CallEvent } from '../api/transport.js';
import type { WorkerHooks } from '../worker/hooks.js';
import type { MetricSet } from './definitions.js';
import { safeLabel, statusLabel } from './labels.js';

/** Where the last known pause state is kept when no Redis is available to read it on scrape. */
export interface PauseFlag {
  paused: boolean;
}

/** Worker observers feeding the handler, API and pause series. */
export function workerHooksFor(m: MetricSet, pause: PauseFlag): WorkerHooks {
  return {
    onHandler({ handler, event, outcome, ms }): void {
      const labels = { handler: safeLabel(handler), event: safeLabel(event), outcome: safeLabel(outcome) };
      m.handlerRuns.inc(labels);
      m.handlerDuration.observe(labels, ms / 1000);
    },
    onApiCall(e: CallEvent): void {
      const op = safeLabel(e.op);
      m.apiCalls.inc({ op, status: statusLabel(e.status, e.error?.code) });
      // A call refused locally (status 0, 0 ms) sent nothing: no duration to record.
      if (e.status > 0 || e.durationMs > 0) m.apiDuration.observe({ op }, e.durationMs / 1000);
      m.rateLimitWait.observe({ priority: safeLabel(e.priority) }, e.rateLimitWaitMs / 1000);
      if (e.status === 429) m.rateLimited.inc({ op });
      if (e.quotaRemaining !== undefined) m.quotaRemaining().set(e.quotaRemaining);
    },
    onStart({ priority, waitMs }): void {
      m.queueWait.observe({ priority: safeLabel(priority) }, Math.max(0, waitMs) / 1000);
    },
    onSkipped({ handler, event, reason }): void {
      m.handlerSkipped.inc({ handler: safeLabel(handler), event: safeLabel(event), reason: safeLabel(reason) });
    },
    onDebounced({ handler, folded }): void {
      if (folded > 0) m.debounced.inc({ handler: safeLabel(handler) }, folded);
    },
    onDispatched({ event, source, duplicate }): void {
      m.dispatched.inc({ event: safeLabel(event), source: safeLabel(source), outcome: duplicate ? 'duplicate_change' : 'dispatched' });
    },
    onPause(reason: string | null): void {
      pause.paused = reason !== null;
    },
  };
}
