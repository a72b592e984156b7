/** Tracing (OpenTelemetry): settings, start-up, and the spans of the data path. */
export { TRACING_PROTOCOLS, tracingSettings, type TracingProtocol, type TracingSettings } from '../config/index.js';
export { startTracing, type Tracing } from './start-tracing.js';
export { tracingState } from './state.js';
export { activeTraceparent, contextOf, safePath, traceReceipt, traceSink, tracedAddBulk, traceparentOf, tracingObserver } from './spans.js';
