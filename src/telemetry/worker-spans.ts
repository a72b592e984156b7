import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { LifecycleSubscriber, ApiCallFacts, AttemptRef, DeliveryFacts } from '../lifecycle/index.js';
import { contextOf, fail, traceparentOf, tracer } from './spans.js';
import { tracingState } from './state.js';

// ── fan-out, handler runs and API calls (worker) ───────────────────────────

const consumer = (queue: string, id: string | undefined, attempt: number): Attributes => ({
  'messaging.system': 'bullmq',
  'messaging.operation.type': 'process',
  'messaging.operation.name': 'process',
  'messaging.destination.name': queue,
  ...(id ? { 'messaging.message.id': id } : {}),
  'switchyard.attempt': attempt,
});

/**
 * Tracing as a subscriber of the worker's lifecycle stream (undefined when
 * tracing is off): the fan-out span (child of the pump span the `events` job
 * carries) and, for each handler attempt, the handler-run span (child of the
 * fan-out span the handler job carries). Each is the scope its fan-out or
 * attempt runs in, so the handler jobs fan-out adds carry its `traceparent`
 * (the fan-out scope's, handed to dispatch in the delivery) and the attempt's API
 * calls are its children: one CLIENT span per API attempt (the poller's and
 * schedules' calls too, children of whatever is active), reported when the
 * call's attempt ends and so back-dated by its duration.
 */
export function tracingObserver(apiBaseUrl: string | undefined): LifecycleSubscriber | undefined {
  if (!tracingState.on) return undefined;
  const fanOuts = new WeakMap<DeliveryFacts, Span>();
  const runs = new WeakMap<AttemptRef, Span>();
  const callSpan = apiBaseUrl ? apiCallTracer(apiBaseUrl) : undefined;
  return {
    received: ({ delivery: d }) => {
      const parent = contextOf(d.traceparent);
      const span = tracer().startSpan(
        `process ${d.job.queue}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            ...consumer(d.job.queue, d.job.id, d.job.attempt),
            'switchyard.delivery_key': d.key,
            'switchyard.event': d.name ?? 'unknown',
          },
        },
        parent,
      );
      fanOuts.set(d, span);
      const active = trace.setSpan(parent, span);
      return { run: (fn) => context.with(active, fn), traceparent: traceparentOf(span) };
    },
    'fanned-out': (e) => {
      const span = fanOuts.get(e.delivery);
      if (!span) return;
      fanOuts.delete(e.delivery);
      if (e.ok) span.setAttribute('switchyard.handlers', e.runs.length);
      else fail(span, e.error);
      span.end();
    },
    // A schedule's run has no span of its own.
    'attempt-started': ({ attempt: a }) => {
      if (a.kind !== 'handler') return undefined;
      const parent = contextOf(a.traceparent);
      const span = tracer().startSpan(
        `process ${a.queue}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            ...consumer(a.queue, a.jobId, a.number),
            'switchyard.delivery_key': a.key,
            'switchyard.event': a.event,
            'switchyard.handler': a.handler,
          },
        },
        parent,
      );
      runs.set(a, span);
      const active = trace.setSpan(parent, span);
      return { run: (fn) => context.with(active, fn) };
    },
    'attempt-ended': (e) => {
      const s = runs.get(e.attempt);
      if (!s) return;
      runs.delete(e.attempt);
      if (!e.ok) {
        fail(s, e.error);
      } else {
        const d = e.decision;
        s.setAttribute('switchyard.outcome', d.kind);
        if (d.kind === 'completed' && d.result.skipped) s.setAttribute('switchyard.skipped', d.result.skipped);
        if (d.kind === 'retry') fail(s, d.error);
        if (d.kind === 'dead') {
          s.setAttribute('error.type', 'dead_lettered');
          s.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      s.end();
    },
    ...(callSpan ? { 'api-call': ({ call }: { call: ApiCallFacts }) => callSpan(call) } : {}),
  };
}

// ── API calls (worker) ─────────────────────────────────────────────────────

/**
 * A path with every segment that is not a plain id or word replaced: contact
 * identifiers such as `email:…` and `phone:…` travel in the path.
 */
export function safePath(path: string): string {
  return path
    .split('/')
    .map((seg) => (seg === '' || /^[A-Za-z0-9_.-]+$/.test(seg) ? seg : '{ref}'))
    .join('/');
}

/** One CLIENT span per API attempt, a child of the active context (the handler-run span), back-dated by its duration. */
function apiCallTracer(baseUrl: string): (e: ApiCallFacts) => void {
  const url = new URL(baseUrl);
  const server: Attributes = { 'server.address': url.hostname, 'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
  const basePath = url.pathname.replace(/\/+$/, '');
  return (e) => {
    const end = Date.now();
    const span = tracer().startSpan(
      `${e.method} ${e.op}`,
      {
        kind: SpanKind.CLIENT,
        startTime: end - e.durationMs,
        attributes: {
          ...server,
          'http.request.method': e.method,
          'url.path': safePath(basePath + e.path),
          'switchyard.api.op': e.op,
          'switchyard.api.priority': e.priority,
          'switchyard.rate_limit_wait_ms': e.rateLimitWaitMs,
          'switchyard.attempt': e.attempt,
          ...(e.attempt > 1 ? { 'http.request.resend_count': e.attempt - 1 } : {}),
          ...(e.status > 0 ? { 'http.response.status_code': e.status } : {}),
          ...(e.idempotencyKey ? { 'switchyard.idempotency_key': e.idempotencyKey } : {}),
          ...(e.replayed ? { 'switchyard.api.replayed': true } : {}),
          ...(e.willRetry ? { 'switchyard.api.will_retry': true } : {}),
        },
      },
      context.active(),
    );
    if (e.error) fail(span, e.error);
    span.end(end);
  };
}
