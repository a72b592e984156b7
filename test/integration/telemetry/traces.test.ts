import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ProxyTracerProvider, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { tracingState } from '../../../src/telemetry/index.js';
import { messageBody } from '../../support/events.js';
import { startOtlpCollector, type CollectedSpan, type OtlpCollector } from '../../support/otlp-collector.js';
import { handlerJobs, sandboxCall, SANDBOX_TOKEN, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, TEST_SECRET, waitFor } from '../../support/service.js';

const NOTES = fileURLToPath(new URL('../../support/handlers/notes', import.meta.url));

/** A message.received delivery whose message text is unique (searched for in every exported byte). */
function delivery(conv: number): { body: string; id: string; text: string } {
  const text = `private words ${randomUUID()}`;
  const env = JSON.parse(messageBody('message.received', conv)) as { id: string; data: { body: string } };
  env.data.body = text;
  return { body: JSON.stringify(env), id: env.id, text };
}

async function firstConversation(p: Pipeline): Promise<number> {
  const r = await sandboxCall(p, 'GET', '/conversations');
  return (r.json.data as { id: number }[])[0]?.id as number;
}

const noteFor = async (p: Pipeline, conv: number, id: string) =>
  (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).some(
    (r) => r.status === 201 && (r.body as { body: string }).body === `seen ${id}`,
  );

describe('tracing (OTLP/HTTP to a collector started by the test)', () => {
  let p: Pipeline | undefined;
  let collector: OtlpCollector | undefined;

  afterEach(async () => {
    await p?.close();
    await collector?.close();
    p = undefined;
    collector = undefined;
    // Shut down with the service: nothing of the SDK stays registered.
    expect(tracingState.on).toBe(false);
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate().constructor.name).toBe('NoopTracerProvider');
  });

  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    it(`${protocol}: one delivery's spans share one trace: receipt → append → pump → fan-out → handler run → API call`, async () => {
      collector = await startOtlpCollector();
      p = await startPipeline({
        handlersDir: NOTES,
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_SERVICE_NAME: 'switchyard-test' },
      });
      const pipe = p;
      const conv = await firstConversation(pipe);
      const d = delivery(conv);
      expect((await deliver(pipe.receiverUrl, d.body)).status).toBe(202);
      await waitFor(() => noteFor(pipe, conv, d.id));
      // The note is written before BullMQ marks the run completed.
      const completed = async () => (await handlerJobs(pipe, ['completed'])).find((j) => j.data.key === d.id);
      await waitFor(async () => (await completed()) !== undefined);
      expect((await completed())?.data.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      const lines = pipe.lines;
      await pipe.close(); // flushes the exporter
      p = undefined;

      const expectedType = protocol === 'http/json' ? 'application/json' : 'application/x-protobuf';
      expect(collector.contentTypes.length).toBeGreaterThan(0);
      expect(collector.contentTypes.every((t) => t.startsWith(expectedType))).toBe(true);

      const receipt = collector.spans.find(
        (s) => s.name === 'POST /webhooks' && s.attributes['switchyard.delivery_key'] === d.id,
      ) as CollectedSpan;
      expect(receipt).toBeDefined();
      const mine = collector.spans.filter((s) => s.traceId === receipt.traceId);
      // Every span naming this delivery is in its trace, and the trace holds nothing else.
      expect(
        collector.spans.filter((s) => s.attributes['switchyard.delivery_key'] === d.id).every((s) => s.traceId === receipt.traceId),
      ).toBe(true);
      const byName = (name: string) => mine.filter((s) => s.name === name);
      const one = (name: string) => {
        const found = byName(name);
        expect(found, name).toHaveLength(1);
        return found[0] as CollectedSpan;
      };
      const append = one('ingest append');
      const pump = one('send events');
      const fanOut = one('process events');
      const run = one('process handlers');
      const call = one('POST notes.create');
      expect(mine).toHaveLength(6);

      // The parent chain.
      expect(receipt.parentSpanId).toBe('');
      expect(append.parentSpanId).toBe(receipt.spanId);
      expect(pump.parentSpanId).toBe(append.spanId);
      expect(fanOut.parentSpanId).toBe(pump.spanId);
      expect(run.parentSpanId).toBe(fanOut.spanId);
      expect(call.parentSpanId).toBe(run.spanId);

      // Kinds: server, producer, producer, consumer, consumer, client.
      expect([receipt, append, pump, fanOut, run, call].map((s) => s.kind)).toEqual([2, 4, 4, 5, 5, 3]);
      expect(receipt.resource['service.name']).toBe('switchyard-test');

      // Semantic-convention and Switchyard attributes.
      expect(receipt.attributes).toMatchObject({
        'http.request.method': 'POST',
        'url.path': '/webhooks',
        'http.route': '/webhooks',
        'http.response.status_code': 202,
        'switchyard.event': 'message.received',
      });
      expect(append.attributes).toMatchObject({ 'switchyard.delivery_key': d.id, 'switchyard.outcome': 'accepted' });
      expect(pump.attributes).toMatchObject({
        'messaging.system': 'bullmq',
        'messaging.destination.name': 'events',
        'messaging.operation.type': 'send',
        'switchyard.delivery_key': d.id,
      });
      expect(pump.attributes['messaging.message.id']).toEqual(expect.any(String));
      expect(fanOut.attributes).toMatchObject({
        'messaging.system': 'bullmq',
        'messaging.destination.name': 'events',
        'messaging.operation.type': 'process',
        'switchyard.attempt': 1,
        'switchyard.handlers': 1,
      });
      expect(run.attributes).toMatchObject({
        'messaging.system': 'bullmq',
        'messaging.destination.name': 'handlers',
        'messaging.operation.type': 'process',
        'switchyard.handler': 'note-on-message',
        'switchyard.event': 'message.received',
        'switchyard.delivery_key': d.id,
        'switchyard.attempt': 1,
        'switchyard.outcome': 'completed',
      });
      expect(run.attributes['messaging.message.id']).toEqual(expect.any(String));
      expect(call.attributes).toMatchObject({
        'http.request.method': 'POST',
        'url.path': `/api/v1/conversations/${conv}/notes`,
        'http.response.status_code': 201,
        'switchyard.api.op': 'notes.create',
        'switchyard.attempt': 1,
      });
      expect(call.attributes['switchyard.rate_limit_wait_ms']).toEqual(expect.any(Number));
      expect(call.attributes['switchyard.idempotency_key']).toEqual(expect.any(String));

      // No secret, no message text, no written body in any exported byte.
      const exported = Buffer.concat(collector.bodies).toString('latin1');
      for (const never of [SANDBOX_TOKEN, TEST_SECRET, d.text, `seen ${d.id}`, 'Bearer', 'x-service-signature'])
        expect(exported).not.toContain(never);

      // Log lines written inside a span carry its ids.
      const done = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l['msg'] === 'handler done' && l['delivery'] === d.id);
      expect(done).toMatchObject({ trace_id: receipt.traceId, span_id: run.spanId });
    });
  }

  it('off without OTEL_EXPORTER_OTLP_*: no SDK, no exporter, no traceparent, no trace ids in logs', async () => {
    p = await startPipeline({ handlersDir: NOTES });
    const pipe = p;
    expect(tracingState.on).toBe(false);
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate().constructor.name).toBe('NoopTracerProvider');
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
    const conv = await firstConversation(pipe);
    const d = delivery(conv);
    expect((await deliver(pipe.receiverUrl, d.body)).status).toBe(202);
    await waitFor(() => noteFor(pipe, conv, d.id));
    const completed = async () => (await handlerJobs(pipe, ['completed'])).find((j) => j.data.key === d.id);
    await waitFor(async () => (await completed()) !== undefined);
    const job = await completed();
    expect(job?.data).toBeDefined();
    expect(job?.data.traceparent).toBeUndefined();
    expect(pipe.lines.some((l) => l.includes('trace_id'))).toBe(false);
  });

  it('OTEL_SDK_DISABLED=true keeps it off even with an endpoint', async () => {
    collector = await startOtlpCollector();
    p = await startPipeline({ handlersDir: NOTES, env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: 'true' } });
    expect(tracingState.on).toBe(false);
    const conv = await firstConversation(p);
    const pipe = p;
    const d = delivery(conv);
    expect((await deliver(pipe.receiverUrl, d.body)).status).toBe(202);
    await waitFor(() => noteFor(pipe, conv, d.id));
    await pipe.close();
    p = undefined;
    expect(collector.bodies).toHaveLength(0);
  });
});
