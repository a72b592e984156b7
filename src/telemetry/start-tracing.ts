import { trace } from '@opentelemetry/api';
import type { Logger } from 'pino';
import pino from 'pino';
import type { TracingSettings } from '../config/index.js';
import { logTraceFields } from './spans.js';
import { tracingState } from './state.js';

/** Tracing of one process; `shutdown` flushes the spans still queued (bound its wait: the caller does). */
export interface Tracing {
  readonly on: boolean;
  shutdown(): Promise<void>;
}

const OFF: Tracing = { on: false, shutdown: async () => undefined };

/**
 * Starts tracing when `settings` are given (Config.tracing): imports the SDK,
 * registers it globally, turns `tracingState.on`, and makes every line of
 * `log` (and of its children, made before or after) written inside a span
 * carry `trace_id` and `span_id`. Without settings it does nothing at all:
 * the SDK is not even imported. One process traces once at a time.
 */
export async function startTracing(settings: TracingSettings | undefined, log: Logger, serviceVersion?: string): Promise<Tracing> {
  if (!settings) return OFF;
  if (tracingState.on) throw new Error('tracing is already on in this process');
  const { startSdk } = await import('./sdk.js');
  const sdk = await startSdk(settings, {
    warn: (message) => log.warn({ exporter: settings.protocol }, `tracing: ${message}`),
    serviceVersion,
  });
  tracingState.tracer = trace.getTracer('switchyard', serviceVersion);
  tracingState.on = true;
  // pino reads the mixin through the prototype chain, so children made before this see it too.
  const target = log as unknown as Record<symbol, unknown>;
  const before = target[pino.symbols.mixinSym];
  target[pino.symbols.mixinSym] = logTraceFields;
  log.info(
    { url: new URL(settings.url).origin, protocol: settings.protocol, service: settings.serviceName },
    'tracing on: spans exported over OTLP/HTTP',
  );
  let stopping: Promise<void> | undefined;
  return {
    on: true,
    shutdown: () => {
      stopping ??= (async () => {
        tracingState.on = false;
        tracingState.tracer = undefined;
        target[pino.symbols.mixinSym] = before;
        await sdk.shutdown();
      })();
      return stopping;
    },
  };
}
