import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { LifecycleBus } from '../../../src/lifecycle/bus.js';
import type { ApiCallFacts, AttemptRef, DeliveryFacts } from '../../../src/lifecycle/events.js';
import { activeTraceparent, tracingObserver } from '../../../src/telemetry/index.js';
import { inMemoryTracing } from '../../support/tracing.js';

const PUMP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const call = (over: Partial<ApiCallFacts> = {}): ApiCallFacts => ({
  op: 'notes.create',
  method: 'POST',
  path: '/conversations/7/notes',
  idempotencyKey: 'k1',
  attempt: 1,
  status: 201,
  durationMs: 5,
  rateLimitWaitMs: 0,
  priority: 'normal',
  replayed: false,
  quotaRemaining: undefined,
  error: undefined,
  willRetry: false,
  ...over,
});

describe('tracing as a lifecycle subscriber', () => {
  const { exporter } = inMemoryTracing();

  it('fan-out span (child of the pump span) is the scope fan-out runs in; the handler-run span (child of the traceparent fan-out gave its job) the scope of the attempt; API calls are its children', async () => {
    const bus = new LifecycleBus().subscribe(tracingObserver('http://api.test:8080/v1/'));
    const delivery: DeliveryFacts = {
      key: 'evt_1',
      name: 'message.received',
      receivedAt: '2026-06-01T12:00:00Z',
      queuedAt: 1,
      secretIndex: 0,
      bytes: 10,
      source: 'webhook',
      traceparent: PUMP,
      raw: new Uint8Array(),
      job: { queue: 'events', id: '12', attempt: 1 },
    };
    // The fan-out scope hands fan-out the trace context it carries on: the fan-out span's, the active one.
    const carried = await bus.within({ type: 'received', delivery }, async (traceparent) => {
      expect(traceparent).toBe(activeTraceparent());
      return traceparent;
    });
    bus.emit({
      type: 'fanned-out',
      delivery,
      envelope: undefined,
      ok: true,
      runs: [{ id: 'notes', placement: 'queued', priority: 'normal' }],
    });
    expect(carried).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);

    const attempt: AttemptRef = {
      kind: 'handler',
      queue: 'handlers-high',
      jobId: 'd/evt_1/notes',
      key: 'evt_1',
      handler: 'notes',
      event: 'message.received',
      number: 2,
      attempts: 5,
      startedAt: Date.now(),
      traceparent: carried,
    };
    await bus.attempt(attempt, async (o) => {
      await Promise.resolve();
      o?.call(call({ status: 429, willRetry: true, error: { name: 'RateLimitedError', message: 'slow', code: 'rate_limited' } }));
      o?.call(call({ attempt: 2 }));
      return { kind: 'retry' as const, error: Object.assign(new Error('boom'), { code: 'upstream_5xx' }) };
    });

    const spans = exporter.getFinishedSpans();
    const byName = (n: string) => spans.filter((s) => s.name === n);
    const fanOut = byName('process events')[0];
    const run = byName('process handlers-high')[0];
    const calls = byName('POST notes.create');
    expect(fanOut?.kind).toBe(SpanKind.CONSUMER);
    expect(fanOut?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(fanOut?.attributes).toMatchObject({
      'messaging.destination.name': 'events',
      'messaging.message.id': '12',
      'switchyard.attempt': 1,
      'switchyard.delivery_key': 'evt_1',
      'switchyard.event': 'message.received',
      'switchyard.handlers': 1,
    });
    expect(carried).toContain(fanOut?.spanContext().spanId);
    expect(run?.parentSpanContext?.spanId).toBe(fanOut?.spanContext().spanId);
    expect(run?.attributes).toMatchObject({
      'messaging.destination.name': 'handlers-high',
      'messaging.message.id': 'd/evt_1/notes',
      'switchyard.attempt': 2,
      'switchyard.handler': 'notes',
      'switchyard.outcome': 'retry',
      'error.type': 'upstream_5xx',
    });
    expect(run?.status.code).toBe(SpanStatusCode.ERROR);
    expect(calls).toHaveLength(2);
    for (const c of calls) {
      expect(c.kind).toBe(SpanKind.CLIENT);
      expect(c.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
      expect(c.attributes).toMatchObject({
        'server.address': 'api.test',
        'server.port': 8080,
        'url.path': '/v1/conversations/7/notes',
        'switchyard.idempotency_key': 'k1',
      });
    }
    expect(calls[0]?.attributes).toMatchObject({
      'http.response.status_code': 429,
      'switchyard.api.will_retry': true,
      'error.type': 'rate_limited',
    });
    expect(calls[1]?.attributes).toMatchObject({ 'http.request.resend_count': 1 });
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it('a schedule run has no span; a fan-out or attempt that throws ends its span as an error', async () => {
    exporter.reset();
    const bus = new LifecycleBus().subscribe(tracingObserver(undefined));
    await bus.attempt(
      {
        kind: 'schedule',
        queue: 'schedules',
        jobId: 'r1',
        key: 'schedule:s:t',
        handler: 's',
        event: 'schedule',
        number: 1,
        attempts: 1,
        startedAt: 0,
        traceparent: undefined,
        tick: 0,
      },
      async () => ({ kind: 'completed' as const, result: { ms: 0 } }),
    );
    await expect(
      bus.attempt(
        {
          kind: 'handler',
          queue: 'handlers',
          jobId: 'j',
          key: 'k',
          handler: 'h',
          event: 'lead.won',
          number: 1,
          attempts: 1,
          startedAt: 0,
          traceparent: undefined,
        },
        async () => {
          throw Object.assign(new Error('redis'), { name: 'ReplyError' });
        },
      ),
    ).rejects.toThrow('redis');
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(['process handlers']);
    expect(spans[0]?.attributes['error.type']).toBe('ReplyError');
    expect(spans[0]?.status.code).toBe(SpanStatusCode.ERROR);
  });
});
