import { isSpanContextValid, ROOT_CONTEXT, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { tracingState } from './state.js';

/*
 * The spans of one delivery, all in one trace:
 *
 *   POST /webhooks (receipt, SERVER)
 *     └ ingest append            (the group-commit write, or the spool)
 *        └ send events           (the pump's addBulk; one span per delivery of the batch)
 *           └ process events     (fan-out, CONSUMER)
 *              └ process handlers[-high|-low]   (one per handler run and attempt, CONSUMER)
 *                 └ <METHOD> <op>               (one per API attempt, CLIENT)
 *
 * Tracing is a subscriber of the two lifecycle streams: the ingest path's
 * (receipt, append, send: src/telemetry/ingest-spans.ts) and the worker's
 * (fan-out, handler runs, API calls: src/telemetry/worker-spans.ts). The
 * context travels as a W3C `traceparent` in the data itself: the inbox item's
 * meta line, the `events` job (StoredDelivery.traceparent) and each handler
 * job (HandlerJobData.traceparent); the code that writes them gets it from the
 * scope tracing returned for the opening event, never from this folder.
 * Attributes are fixed, non-personal fields only: no body, no header value, no
 * query string, no error message. This file holds what both share.
 */

/** W3C Trace Context `traceparent` of a span. */
export function traceparentOf(span: Span): string {
  const sc = span.spanContext();
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 1) === 1 ? '01' : '00'}`;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The context a carried `traceparent` names (a remote parent); the root context without a valid one. */
export function contextOf(traceparent: string | undefined): Context {
  if (typeof traceparent !== 'string') return ROOT_CONTEXT;
  const m = TRACEPARENT.exec(traceparent);
  if (!m) return ROOT_CONTEXT;
  const sc = { traceId: m[1] as string, spanId: m[2] as string, traceFlags: parseInt(m[3] as string, 16) & 1, isRemote: true };
  return isSpanContextValid(sc) ? trace.setSpanContext(ROOT_CONTEXT, sc) : ROOT_CONTEXT;
}

/** The `traceparent` of the active span, when tracing is on and one is active. */
export function activeTraceparent(): string | undefined {
  if (!tracingState.on) return undefined;
  const span = trace.getActiveSpan();
  return span && span.isRecording() ? traceparentOf(span) : undefined;
}

/** `trace_id` and `span_id` of the active span for a log line (the pino mixin installed when tracing is on). */
export function logTraceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}

/** The process's tracer (set by startTracing). */
export function tracer(): Tracer {
  return tracingState.tracer ?? trace.getTracer('switchyard');
}

/** A stable, non-personal name for what went wrong: an error's `code`, else its class name. */
export function errorType(err: unknown): string {
  if (err && typeof err === 'object') {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && /^[\w.-]{1,64}$/.test(code)) return code;
    const name = (err as { name?: unknown }).name;
    if (typeof name === 'string' && /^[\w.-]{1,64}$/.test(name)) return name;
  }
  return 'error';
}

/** Marks `span` as failed with a non-personal error type. */
export function fail(span: Span, err: unknown): void {
  // Never recordException: messages and stacks may hold personal data.
  span.setAttribute('error.type', errorType(err));
  span.setStatus({ code: SpanStatusCode.ERROR });
}
