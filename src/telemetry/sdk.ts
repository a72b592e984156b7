import { context, diag, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TracingSettings } from '../config/index.js';

/**
 * The OpenTelemetry SDK: imported (dynamically, by start-tracing.ts) only when tracing
 * is on. Registers the global tracer provider and an AsyncLocalStorage context
 * manager, with a BatchSpanProcessor in front of the OTLP/HTTP exporter of the
 * configured encoding.
 */
export interface Sdk {
  shutdown(): Promise<void>;
}

export interface SdkOptions {
  /** Where exporter problems go (the OTel diagnostics channel, warn and above). */
  warn(message: string): void;
  serviceVersion?: string | undefined;
}

async function exporterFor(s: TracingSettings): Promise<SpanExporter> {
  const config = { url: s.url, headers: { ...s.headers }, timeoutMillis: s.timeoutMs };
  if (s.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(config);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(config);
}

export async function startSdk(s: TracingSettings, opts: SdkOptions): Promise<Sdk> {
  const say = (...args: unknown[]) => opts.warn(args.map(String).join(' '));
  diag.setLogger({ error: say, warn: say, info: () => undefined, debug: () => undefined, verbose: () => undefined }, DiagLogLevel.WARN);
  const exporter = await exporterFor(s);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': s.serviceName,
      ...(opts.serviceVersion ? { 'service.version': opts.serviceVersion } : {}),
    }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  return {
    shutdown: async () => {
      try {
        // Flushes what is queued, then stops the processor's timer and the exporter.
        await provider.shutdown();
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
        diag.disable();
      }
    },
  };
}
