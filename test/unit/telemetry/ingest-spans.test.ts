import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { beforeEach, describe, expect, it } from 'vitest';
import { IngestBus } from '../../../src/lifecycle/ingest-bus.js';
import type { PumpFacts, RequestFacts, StoringFacts } from '../../../src/lifecycle/ingest-events.js';
import { ingestTracingObserver } from '../../../src/telemetry/index.js';
import { inMemoryTracing } from '../../support/tracing.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
const request: RequestFacts = { method: 'POST', path: '/webhooks', route: '/webhooks' };
const storing = (key: string): StoringFacts => ({
  key,
  name: 'lead.won',
  receivedAt: '2026-01-01T00:00:00.000Z',
  bytes: new Uint8Array(),
  headers: {},
});
const pumped = (key: string, traceparent: string | undefined, batch = 2): PumpFacts => ({
  key,
  name: null,
  jobId: `d/${key}`,
  queue: 'events',
  batch,
  traceparent,
});

describe('tracing as a subscriber of the ingest stream', () => {
  const { exporter, provider } = inMemoryTracing();
  beforeEach(() => exporter.reset());

  it('receipt (a new trace, the scope the route runs in) → append (its child; the stored delivery carries it) → one send per delivery (each the child of its own append)', async () => {
    const bus = new IngestBus().subscribe(ingestTracingObserver());
    // A sender's trace context is never trusted: the receipt starts a trace even inside another span.
    const outer = provider.getTracer('test').startSpan('outer');
    const stored = await context.with(trace.setSpan(context.active(), outer), () =>
      bus.receipt(request, async () => {
        let carried: string | undefined;
        const outcome = await bus.store(storing('evt_1'), async (traceparent) => {
          carried = traceparent;
          return 'accepted' as const;
        });
        bus.emit({ type: 'answered', request, ok: true, status: 202, report: { outcome, ms: 1 } });
        return carried;
      }),
    );
    outer.end();
    expect(stored).toMatch(TRACEPARENT);
    const jobs = await bus.pump([pumped('evt_1', stored), pumped('evt_2', undefined)], async (carried) => carried);
    expect(jobs.every((tp) => TRACEPARENT.test(tp ?? ''))).toBe(true);

    const spans = exporter.getFinishedSpans();
    const one = (name: string) => spans.filter((s) => s.name === name);
    const [receipt] = one('POST /webhooks');
    const [append] = one('ingest append');
    const sends = one('send events');
    expect(receipt?.kind).toBe(SpanKind.SERVER);
    expect(receipt?.parentSpanContext).toBeUndefined();
    expect(receipt?.spanContext().traceId).not.toBe(outer.spanContext().traceId);
    expect(receipt?.attributes).toEqual({
      'http.request.method': 'POST',
      'url.path': '/webhooks',
      'http.route': '/webhooks',
      'url.scheme': 'http',
      'switchyard.delivery_key': 'evt_1',
      'switchyard.event': 'lead.won',
      'http.response.status_code': 202,
    });
    expect(append?.kind).toBe(SpanKind.PRODUCER);
    expect(append?.parentSpanContext?.spanId).toBe(receipt?.spanContext().spanId);
    expect(append?.attributes).toMatchObject({ 'messaging.destination.name': 'ingest:inbox', 'switchyard.outcome': 'accepted' });
    expect(stored).toContain(append?.spanContext().spanId);
    expect(sends).toHaveLength(2);
    const first = sends.find((s) => s.attributes['switchyard.delivery_key'] === 'evt_1');
    const second = sends.find((s) => s.attributes['switchyard.delivery_key'] === 'evt_2');
    expect(first?.parentSpanContext?.spanId).toBe(append?.spanContext().spanId);
    expect(second?.parentSpanContext).toBeUndefined();
    expect(first?.attributes).toMatchObject({
      'messaging.system': 'bullmq',
      'messaging.operation.name': 'addBulk',
      'messaging.batch.message_count': 2,
      'messaging.message.id': 'd/evt_1',
      'switchyard.event': 'unknown',
    });
    expect(jobs[0]).toContain(first?.spanContext().spanId);
    expect(jobs[1]).toContain(second?.spanContext().spanId);
  });

  it('a 5xx answer, a route that throws, a failed write and a failed addBulk end their spans as errors', async () => {
    const bus = new IngestBus().subscribe(ingestTracingObserver());
    await bus.receipt(request, async () => {
      await bus
        .store(storing('evt_5'), async () => Promise.reject(Object.assign(new Error('full'), { code: 'spool_full' })))
        .catch(() => {});
      bus.emit({ type: 'answered', request, ok: true, status: 503, report: { outcome: 'unavailable', ms: 1 } });
    });
    const thrown = { ...request };
    await expect(bus.receipt(thrown, async () => Promise.reject(new TypeError('bug')))).rejects.toThrow('bug');
    await expect(bus.pump([pumped('evt_6', undefined, 1)], async () => Promise.reject(new Error('redis gone')))).rejects.toThrow();

    const spans = exporter.getFinishedSpans();
    const receipts = spans.filter((s) => s.name === 'POST /webhooks');
    expect(receipts.map((s) => s.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.ERROR]);
    expect(receipts[0]?.attributes['http.response.status_code']).toBe(503);
    expect(receipts[1]?.attributes['error.type']).toBe('TypeError');
    const append = spans.find((s) => s.name === 'ingest append');
    expect(append?.attributes['error.type']).toBe('spool_full');
    expect(append?.attributes['switchyard.outcome']).toBeUndefined();
    const send = spans.find((s) => s.name === 'send events');
    expect(send?.status.code).toBe(SpanStatusCode.ERROR);
    expect(send?.attributes['error.type']).toBe('Error');
  });
});
