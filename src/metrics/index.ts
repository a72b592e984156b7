export { createMetrics, type Metrics, type MetricsOptions } from './create.js';
export { createMetricsApp } from './app.js';
export { DELIVERY_OUTCOMES } from './definitions.js';
export { safeLabel } from './labels.js';
export type { OrderedBacklog } from './queue-collector.js';
