import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { IngestSubscriber, PumpFacts, RequestFacts, StoringFacts } from '../lifecycle/index.js';
import { contextOf, fail, traceparentOf, tracer } from './spans.js';
import { tracingState } from './state.js';

/**
 * Tracing as a subscriber of the ingest stream (undefined when tracing is off,
 * so the route and the pump build no event for it):
 *
 * - the receipt span of each webhook request (a new trace per request: a
 *   sender's own trace context is not trusted), the scope the route runs in,
 *   ended with the answer's status;
 * - the append span (child of the receipt): the durable write, group commit or
 *   disk spool; its `traceparent` is the one the stored delivery carries, which
 *   the pump continues;
 * - the pump's send span of each delivery of a batch, each a child of its own
 *   delivery's append span (not one batch span with links: a batch groups
 *   unrelated deliveries, and each delivery's trace must stay whole); each
 *   `events` job carries its send span's `traceparent` on to the fan-out.
 */
export function ingestTracingObserver(): IngestSubscriber | undefined {
  if (!tracingState.on) return undefined;
  return { ...receiptSpans(), ...appendSpans(), ...sendSpans() };
}

/** The receipt span of each request: opened by `received` (the scope the route runs in), ended by `answered`. */
function receiptSpans(): Pick<IngestSubscriber, 'received' | 'answered'> {
  const receipts = new WeakMap<RequestFacts, Span>();
  return {
    received: ({ request: r }) => {
      const span = tracer().startSpan(
        `POST ${r.route}`,
        {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': r.method, 'url.path': r.path, 'http.route': r.route, 'url.scheme': 'http' },
        },
        ROOT_CONTEXT,
      );
      receipts.set(r, span);
      const active = trace.setSpan(ROOT_CONTEXT, span);
      return { run: (fn) => context.with(active, fn) };
    },
    answered: (e) => {
      const span = receipts.get(e.request);
      if (!span) return;
      receipts.delete(e.request);
      if (e.ok) {
        span.setAttribute('http.response.status_code', e.status);
        if (e.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      } else fail(span, e.error);
      span.end();
    },
  };
}

/** The append span of each durable write: opened by `storing` (its scope carries the stored delivery's trace context), ended by `stored`. */
function appendSpans(): Pick<IngestSubscriber, 'storing' | 'stored'> {
  const appends = new WeakMap<StoringFacts, Span>();
  return {
    storing: ({ delivery: d }) => {
      const parent = context.active();
      trace.getSpan(parent)?.setAttributes({ 'switchyard.delivery_key': d.key, 'switchyard.event': d.name ?? 'unknown' });
      const span = tracer().startSpan(
        'ingest append',
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            'messaging.system': 'redis',
            'messaging.operation.type': 'send',
            'messaging.destination.name': 'ingest:inbox',
            'switchyard.delivery_key': d.key,
            'switchyard.event': d.name ?? 'unknown',
          },
        },
        parent,
      );
      appends.set(d, span);
      const active = trace.setSpan(parent, span);
      return { run: (fn) => context.with(active, fn), traceparent: traceparentOf(span) };
    },
    stored: (e) => {
      const span = appends.get(e.delivery);
      if (!span) return;
      appends.delete(e.delivery);
      if (e.ok) span.setAttribute('switchyard.outcome', e.outcome);
      else fail(span, e.error);
      span.end();
    },
  };
}

/** The send span of each delivery the pump queues: opened by `pumping` (its job carries the span's trace context), ended by `pumped`. */
function sendSpans(): Pick<IngestSubscriber, 'pumping' | 'pumped'> {
  const sends = new WeakMap<PumpFacts, Span>();
  return {
    pumping: ({ delivery: d }) => {
      const span = tracer().startSpan(
        `send ${d.queue}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            'messaging.system': 'bullmq',
            'messaging.operation.type': 'send',
            'messaging.operation.name': 'addBulk',
            'messaging.destination.name': d.queue,
            'messaging.batch.message_count': d.batch,
            ...(d.jobId ? { 'messaging.message.id': d.jobId } : {}),
            'switchyard.delivery_key': d.key,
            'switchyard.event': d.name ?? 'unknown',
          },
        },
        contextOf(d.traceparent),
      );
      sends.set(d, span);
      return { run: (fn) => fn(), traceparent: traceparentOf(span) };
    },
    pumped: (e) => {
      const span = sends.get(e.delivery);
      if (!span) return;
      sends.delete(e.delivery);
      if (!e.ok) fail(span, e.error);
      span.end();
    },
  };
}
