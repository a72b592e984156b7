import { context, isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
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
 * The context travels as a W3C `traceparent` in the data itself: the inbox
 * item's meta line, the `events` job (StoredDelivery.traceparent) and each
 * handler job (HandlerJobData.traceparent). Attributes are fixed, non-personal
 * fields only: no body, no header value, no query string, no error message.
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

function tracer(): Tracer {
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

function fail(span: Span, err: unknown): void {
  // Never recordException: messages and stacks may hold personal data.
  span.setAttribute('error.type', errorType(err));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Runs `fn` in `span`'s context (a child of `parent`) and ends the span when it settles. */
async function within<T>(span: Span, parent: Context, fn: () => Promise<T>, done?: (span: Span, result: T) => void): Promise<T> {
  try {
    const result = await context.with(trace.setSpan(parent, span), fn);
    done?.(span, result);
    return result;
  } catch (err) {
    fail(span, err);
    throw err;
  } finally {
    span.end();
  }
}

// ── receipt and append (receiver) ──────────────────────────────────────────

/** The part of Hono's context the receipt span reads. */
interface RequestLike { readonly req: { readonly method: string; readonly path: string } }

/**
 * Wraps the webhook route in the receipt span (a new trace per request; a
 * sender's own trace context is not trusted). Returns `handler` itself when
 * tracing is off, so the route costs nothing more.
 */
export function traceReceipt<C extends RequestLike>(handler: (c: C) => Promise<Response>, route: string): (c: C) => Promise<Response> {
  if (!tracingState.on) return handler;
  return (c) => {
    const span = tracer().startSpan(`POST ${route}`, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path, 'http.route': route, 'url.scheme': 'http' },
    }, ROOT_CONTEXT);
    return within(span, ROOT_CONTEXT, () => handler(c), (s, res) => {
      s.setAttribute('http.response.status_code', res.status);
      if (res.status >= 500) s.setStatus({ code: SpanStatusCode.ERROR });
    });
  };
}

/** The delivery fields the append span reads and the `traceparent` it adds. */
interface DeliveryLike { readonly key: string; readonly name: string | null; readonly traceparent?: string }

/**
 * Wraps a delivery sink in the append span (child of the receipt): the
 * durable write (group commit, or the disk spool). The delivery stored
 * carries the append span's `traceparent`, which the pump continues. Returns
 * `sink` itself when tracing is off.
 */
export function traceSink<D extends DeliveryLike, O extends string>(sink: { put(d: D, raw?: Uint8Array): Promise<O> }): { put(d: D, raw?: Uint8Array): Promise<O> } {
  if (!tracingState.on) return sink;
  const put = (d: D, raw?: Uint8Array): Promise<O> => {
    const parent = context.active();
    trace.getSpan(parent)?.setAttributes({ 'switchyard.delivery_key': d.key, 'switchyard.event': d.name ?? 'unknown' });
    const span = tracer().startSpan('ingest append', {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.system': 'redis', 'messaging.operation.type': 'send', 'messaging.destination.name': 'ingest:inbox', 'switchyard.delivery_key': d.key, 'switchyard.event': d.name ?? 'unknown' },
    }, parent);
    return within(span, parent, () => sink.put({ ...d, traceparent: traceparentOf(span) }, raw), (s, outcome) => s.setAttribute('switchyard.outcome', outcome));
  };
  return { put };
}

// ── pump ───────────────────────────────────────────────────────────────────

interface BulkJob<D> { readonly name: string; readonly data: D; readonly opts?: { readonly jobId?: string } }

/**
 * The pump's `addBulk` with one span per delivery of the batch, each a child
 * of its own delivery's append span (not one batch span with links: a batch
 * groups unrelated deliveries, and each delivery's trace must stay whole).
 * Each job carries its pump span's `traceparent` on to the fan-out.
 */
export async function tracedAddBulk<D extends DeliveryLike, R>(
  queue: { readonly name: string; addBulk(jobs: BulkJob<D>[]): Promise<R> },
  jobs: BulkJob<D>[],
): Promise<R> {
  const spans = jobs.map((j) => tracer().startSpan(`send ${queue.name}`, {
    kind: SpanKind.PRODUCER,
    attributes: {
      'messaging.system': 'bullmq', 'messaging.operation.type': 'send', 'messaging.operation.name': 'addBulk',
      'messaging.destination.name': queue.name, 'messaging.batch.message_count': jobs.length,
      ...(j.opts?.jobId ? { 'messaging.message.id': j.opts.jobId } : {}),
      'switchyard.delivery_key': j.data.key, 'switchyard.event': j.data.name ?? 'unknown',
    },
  }, contextOf(j.data.traceparent)));
  const traced = jobs.map((j, i) => ({ ...j, data: { ...j.data, traceparent: traceparentOf(spans[i] as Span) } }));
  try {
    return await queue.addBulk(traced);
  } catch (err) {
    for (const s of spans) fail(s, err);
    throw err;
  } finally {
    for (const s of spans) s.end();
  }
}

// ── fan-out and handler runs (worker) ──────────────────────────────────────

interface JobLike<D> { readonly id?: string | undefined; readonly queueName: string; readonly attemptsMade: number; readonly data: D }

const consumer = (queue: string, id: string | undefined, attempt: number): Attributes => ({
  'messaging.system': 'bullmq', 'messaging.operation.type': 'process', 'messaging.operation.name': 'process',
  'messaging.destination.name': queue, ...(id ? { 'messaging.message.id': id } : {}), 'switchyard.attempt': attempt,
});

/**
 * Wraps the `events` job processor in the fan-out span (child of the pump
 * span the job carries); the handler jobs it adds carry this span's
 * `traceparent` (src/worker/dispatcher.ts reads `activeTraceparent`).
 * Returns `fn` itself when tracing is off.
 */
export function traceFanOut<D extends DeliveryLike, J extends JobLike<D>, R extends { handlers: readonly string[] }>(fn: (job: J) => Promise<R>): (job: J) => Promise<R> {
  if (!tracingState.on) return fn;
  return (job) => {
    const parent = contextOf(job.data.traceparent);
    const span = tracer().startSpan(`process ${job.queueName}`, {
      kind: SpanKind.CONSUMER,
      attributes: { ...consumer(job.queueName, job.id, job.attemptsMade + 1), 'switchyard.delivery_key': job.data.key, 'switchyard.event': job.data.name ?? 'unknown' },
    }, parent);
    return within(span, parent, () => fn(job), (s, r) => s.setAttribute('switchyard.handlers', r.handlers.length));
  };
}

interface HandlerViewLike {
  readonly id: string;
  readonly attemptsMade: number;
  readonly data: { readonly key: string; readonly handlerId: string; readonly event: { readonly name: string }; readonly traceparent?: string };
}
type DecisionLike =
  | { readonly kind: 'completed'; readonly result: { readonly skipped?: string } }
  | { readonly kind: 'retry'; readonly error: Error }
  | { readonly kind: 'dead' | 'delay' | 'pause' };

/**
 * Wraps the handler job processor in the handler-run span (child of the
 * fan-out span the job carries): one per attempt. `queue` names the
 * priority's queue. Returns `fn` itself when tracing is off.
 */
export function traceHandlerRuns<V extends HandlerViewLike, R extends DecisionLike>(
  fn: (view: V, signal?: AbortSignal) => Promise<R>,
): (queue: string, view: V, signal?: AbortSignal) => Promise<R> {
  if (!tracingState.on) return (_queue, view, signal) => fn(view, signal);
  return (queue, view, signal) => {
    const parent = contextOf(view.data.traceparent);
    const span = tracer().startSpan(`process ${queue}`, {
      kind: SpanKind.CONSUMER,
      attributes: {
        ...consumer(queue, view.id, view.attemptsMade + 1),
        'switchyard.delivery_key': view.data.key, 'switchyard.event': view.data.event.name, 'switchyard.handler': view.data.handlerId,
      },
    }, parent);
    return within(span, parent, () => fn(view, signal), (s, d) => {
      s.setAttribute('switchyard.outcome', d.kind);
      if (d.kind === 'completed' && d.result.skipped) s.setAttribute('switchyard.skipped', d.result.skipped);
      if (d.kind === 'retry') fail(s, d.error);
      if (d.kind === 'dead') { s.setAttribute('error.type', 'dead_lettered'); s.setStatus({ code: SpanStatusCode.ERROR }); }
    });
  };
}

// ── API calls (worker) ─────────────────────────────────────────────────────

/** The fields of the client's per-attempt report (src/api/transport.ts CallEvent) a span takes. */
interface CallLike {
  readonly op: string;
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey: string | undefined;
  readonly attempt: number;
  readonly status: number;
  readonly durationMs: number;
  readonly rateLimitWaitMs: number;
  readonly priority: string;
  readonly replayed: boolean;
  readonly error: { readonly code?: string } | undefined;
  readonly willRetry: boolean;
}

/**
 * A path with every segment that is not a plain id or word replaced: contact
 * identifiers such as `email:…` and `phone:…` travel in the path.
 */
export function safePath(path: string): string {
  return path.split('/').map((seg) => (seg === '' || /^[A-Za-z0-9_.-]+$/.test(seg) ? seg : '{ref}')).join('/');
}

/**
 * The API client's `onCall` hook that records one CLIENT span per attempt, as
 * a child of the active handler-run span; it is reported when the attempt
 * ends, so the span is back-dated by its duration. Undefined when tracing is off.
 */
export function apiCallTracer(baseUrl: string): ((e: CallLike) => void) | undefined {
  if (!tracingState.on) return undefined;
  const url = new URL(baseUrl);
  const server: Attributes = { 'server.address': url.hostname, 'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
  const basePath = url.pathname.replace(/\/+$/, '');
  return (e) => {
    const end = Date.now();
    const span = tracer().startSpan(`${e.method} ${e.op}`, {
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
    }, context.active());
    if (e.error) fail(span, e.error);
    span.end(end);
  };
}
