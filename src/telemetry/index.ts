/** Tracing (OpenTelemetry): settings, start-up, and the spans of the data path as subscribers of the lifecycle streams. */
export { TRACING_PROTOCOLS, tracingSettings, type TracingProtocol, type TracingSettings } from '../config/index.js';
export { startTracing, type Tracing } from './start-tracing.js';
export { tracingState } from './state.js';
export { activeTraceparent, contextOf, traceparentOf } from './spans.js';
export { ingestTracingObserver } from './ingest-spans.js';
export { safePath, tracingObserver } from './worker-spans.js';
