import {
  context,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { LifecycleSubscriber, ApiCallFacts, AttemptRef, DeliveryFacts } from '../lifecycle/index.js';
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
interface RequestLike {
  readonly req: { readonly method: string; readonly path: string };
}

/**
 * Wraps the webhook route in the receipt span (a new trace per request; a
 * sender's own trace context is not trusted). Returns `handler` itself when
 * tracing is off, so the route costs nothing more.
 */
export function traceReceipt<C extends RequestLike>(handler: (c: C) => Promise<Response>, route: string): (c: C) => Promise<Response> {
  if (!tracingState.on) return handler;
  return (c) => {
    const span = tracer().startSpan(
      `POST ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path, 'http.route': route, 'url.scheme': 'http' },
      },
      ROOT_CONTEXT,
    );
    return within(
      span,
      ROOT_CONTEXT,
      () => handler(c),
      (s, res) => {
        s.setAttribute('http.response.status_code', res.status);
        if (res.status >= 500) s.setStatus({ code: SpanStatusCode.ERROR });
      },
    );
  };
}

/** The delivery fields the append span reads and the `traceparent` it adds. */
interface DeliveryLike {
  readonly key: string;
  readonly name: string | null;
  readonly traceparent?: string;
}

/**
 * Wraps a delivery sink in the append span (child of the receipt): the
 * durable write (group commit, or the disk spool). The delivery stored
 * carries the append span's `traceparent`, which the pump continues. Returns
 * `sink` itself when tracing is off.
 */
export function traceSink<D extends DeliveryLike, O extends string>(sink: {
  put(d: D, raw?: Uint8Array): Promise<O>;
}): { put(d: D, raw?: Uint8Array): Promise<O> } {
  if (!tracingState.on) return sink;
  const put = (d: D, raw?: Uint8Array): Promise<O> => {
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
    return within(
      span,
      parent,
      () => sink.put({ ...d, traceparent: traceparentOf(span) }, raw),
      (s, outcome) => s.setAttribute('switchyard.outcome', outcome),
    );
  };
  return { put };
}

// ── pump ───────────────────────────────────────────────────────────────────

interface BulkJob<D> {
  readonly name: string;
  readonly data: D;
  readonly opts?: { readonly jobId?: string };
}

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
  const spans = jobs.map((j) =>
    tracer().startSpan(
      `send ${queue.name}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': 'bullmq',
          'messaging.operation.type': 'send',
          'messaging.operation.name': 'addBulk',
          'messaging.destination.name': queue.name,
          'messaging.batch.message_count': jobs.length,
          ...(j.opts?.jobId ? { 'messaging.message.id': j.opts.jobId } : {}),
          'switchyard.delivery_key': j.data.key,
          'switchyard.event': j.data.name ?? 'unknown',
        },
      },
      contextOf(j.data.traceparent),
    ),
  );
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
 * (src/worker/dispatcher.ts reads `activeTraceparent`) and the attempt's API
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
      return { run: (fn) => context.with(active, fn) };
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
