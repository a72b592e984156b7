export { createMetrics, type Metrics, type MetricsOptions, type WorkspaceMetrics } from './create.js';
export { createMetricsApp } from './app.js';
export { DELIVERY_OUTCOMES } from './definitions.js';
export { safeLabel } from './labels.js';
export type { OrderedBacklog, WorkspaceSource } from './queue-collector.js';
