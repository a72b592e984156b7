import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { DeliveryOutcome } from '../lifecycle/index.js';

/** Every delivery outcome, pre-set to 0 so each series exists from the first scrape. */
export const DELIVERY_OUTCOMES: readonly DeliveryOutcome[] = [
  'accepted',
  'duplicate',
  'spooled',
  'bad_signature',
  'too_large',
  'timeout',
  'unavailable',
];

/** Ingest: one verify + dedupe + durable append is sub-millisecond to a few ms; Redis trouble reaches 1 s. */
const INGEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** Handler runs: local work in ms, API round trips and limiter waits in seconds. */
const HANDLER_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** API attempts: loopback sandbox in ms, the real service in 100s of ms, timeouts at 10 s+. */
const API_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Limiter waits: 0 when under the burst, up to the 10 s window (longer when the service asked). */
/** Wake-ups of durable sleeps and waits: BullMQ promotes a due job within ms; a busy worker takes longer (goal: 1 s). */
const WAKE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const WAIT_BUCKETS = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

/**
 * The series Switchyard exports, registered on one (non-default) registry. Every series but `redis_up`
 * carries a `workspace` label: the workspace (WORKSPACES_FILE id) it counts, `default` in a deployment of one.
 */
export function defineMetrics(registry: Registry) {
  const registers = [registry];
  const deliveries = new Counter({
    name: 'switchyard_deliveries_total',
    help: 'Webhook requests by outcome (accepted, duplicate, spooled, bad_signature, too_large, timeout, unavailable)',
    labelNames: ['outcome', 'workspace'] as const,
    registers,
  });

  return {
    deliveries,
    secretIndex: new Counter({
      name: 'switchyard_signature_secret_index_total',
      help:
        'Verified deliveries by the index of the WEBHOOK_SECRETS entry that matched (0 = current); ' +
        'an old secret can be retired once its index stops growing',
      labelNames: ['index', 'workspace'] as const,
      registers,
    }),
    spoolDrained: new Counter({
      name: 'switchyard_spool_drained_total',
      help: 'Deliveries moved from the disk spool into Redis once it was reachable again',
      labelNames: ['workspace'] as const,
      registers,
    }),
    ingestDuration: new Histogram({
      name: 'switchyard_ingest_duration_seconds',
      help: 'Time from the request to the answer of the webhook route, by outcome',
      labelNames: ['outcome', 'workspace'] as const,
      buckets: INGEST_BUCKETS,
      registers,
    }),
    handlerDuration: new Histogram({
      name: 'switchyard_handler_duration_seconds',
      help: 'Handler run time by handler, event and outcome (completed, retry, delay, dead, pause)',
      labelNames: ['handler', 'event', 'outcome', 'workspace'] as const,
      buckets: HANDLER_BUCKETS,
      registers,
    }),
    handlerRuns: new Counter({
      name: 'switchyard_handler_runs_total',
      help: 'Handler runs by handler, event and outcome (completed, retry, delay, dead, pause)',
      labelNames: ['handler', 'event', 'outcome', 'workspace'] as const,
      registers,
    }),
    handlerSkipped: new Counter({
      name: 'switchyard_handler_skipped_total',
      help:
        'Handler runs completed without running the handler, ' +
        'by handler, event and reason (max_age, stale, already_completed, burst_gone)',
      labelNames: ['handler', 'event', 'reason', 'workspace'] as const,
      registers,
    }),
    debounced: new Counter({
      name: 'switchyard_debounced_events_total',
      help: "Events folded into a later event's run by a debounced handler (a burst of n events adds n - 1), by handler",
      labelNames: ['handler', 'workspace'] as const,
      registers,
    }),
    dispatched: new Counter({
      name: 'switchyard_dispatched_total',
      help:
        'Valid deliveries fanned out, by event, source (webhook, reconcile) ' +
        'and outcome (dispatched; duplicate_change: another delivery of the same change ran)',
      labelNames: ['event', 'source', 'outcome', 'workspace'] as const,
      registers,
    }),
    queueWait: new Histogram({
      name: 'switchyard_queue_wait_seconds',
      help: 'Time a handler job waited in its queue from when it could run to when a worker started it, by priority',
      labelNames: ['priority', 'workspace'] as const,
      buckets: WAIT_BUCKETS,
      registers,
    }),
    waits: new Counter({
      name: 'switchyard_waits_total',
      help:
        'Durable sleeps and waits (ctx.sleep, ctx.sleepUntil, ctx.waitForEvent) ' +
        'by handler, kind and outcome: begun, then due, event, timeout or cancelled',
      labelNames: ['handler', 'kind', 'outcome', 'workspace'] as const,
      registers,
    }),
    waitLateness: new Histogram({
      name: 'switchyard_wait_wake_lateness_seconds',
      help: 'How long after its due time a parked run resumed (a sleep that ended, a wait that timed out), by kind',
      labelNames: ['kind', 'workspace'] as const,
      buckets: WAKE_BUCKETS,
      registers,
    }),
    apiCalls: new Counter({
      name: 'switchyard_api_calls_total',
      help: 'Workspace API attempts by operation and HTTP status (a local error code when nothing answered)',
      labelNames: ['op', 'status', 'workspace'] as const,
      registers,
    }),
    apiDuration: new Histogram({
      name: 'switchyard_api_call_duration_seconds',
      help: 'Workspace API attempt duration by operation (excluding the rate-limiter wait)',
      labelNames: ['op', 'workspace'] as const,
      buckets: API_BUCKETS,
      registers,
    }),
    rateLimitWait: new Histogram({
      name: 'switchyard_api_rate_limit_wait_seconds',
      help: 'Time an API attempt waited for the shared rate limiter, by the priority it asked for',
      labelNames: ['priority', 'workspace'] as const,
      buckets: WAIT_BUCKETS,
      registers,
    }),
    rateLimited: new Counter({
      name: 'switchyard_api_rate_limited_total',
      help: 'API answers with status 429 (rate limited), by operation',
      labelNames: ['op', 'workspace'] as const,
      registers,
    }),
    /** Registered on the first report, so no process shows a 0 quota it never heard of. */
    quotaRemaining: lazy(
      () =>
        new Gauge({
          name: 'switchyard_api_quota_remaining',
          help: 'Monthly API quota remaining, as last reported by the service (absent until a call reported it)',
          labelNames: ['workspace'] as const,
          registers,
        }),
    ),
  };
}

/** The metric objects returned by {@link defineMetrics}. */
export type MetricSet = ReturnType<typeof defineMetrics>;
