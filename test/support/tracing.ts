import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll } from 'vitest';
import { tracingState } from '../../src/telemetry/index.js';

/**
 * Tracing on for the calling `describe` block, its spans kept in memory: an
 * async-hooks context manager (scopes follow awaits) and a tracer of the
 * returned provider on the returned exporter, installed before its tests and taken down after them.
 */
export function inMemoryTracing(): { exporter: InMemorySpanExporter; provider: BasicTracerProvider } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(manager.enable());
    tracingState.on = true;
    tracingState.tracer = provider.getTracer('test');
  });
  afterAll(async () => {
    tracingState.on = false;
    tracingState.tracer = undefined;
    context.disable();
    await provider.shutdown();
  });
  return { exporter, provider };
}
