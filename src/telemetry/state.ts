import type { Tracer } from '@opentelemetry/api';

/**
 * Whether this process traces, set once by `startTracing` (src/telemetry/start-tracing.ts)
 * before the receiver and worker are built. Code on the hot path either checks
 * `on` (one property read) or installs its tracing wrapper only when it is set,
 * so with tracing off nothing else runs and the SDK is never imported.
 */
export const tracingState: { on: boolean; tracer: Tracer | undefined } = { on: false, tracer: undefined };
