/** The surface of src/history/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { KeptBodyError, packBody, readKeptBodies, readKeptDeliveries, unpackBody } from './bodies.js';
export { historyKeys, parseJobId } from './keys.js';
export { duplicateHistory, historyObserver } from './observe.js';
export {
  DELIVERY_OUTCOMES,
  PENDING_STATES,
  findDeliveries,
  listDeliveries,
  type DeliveryFilter,
  type DeliveryListing,
  type ScanStats,
} from './list.js';
export { readTrace, type DeliverySummary, type Trace } from './read.js';
export type { AttemptEntry, CallRecord, FanOutEntry, StepRecord } from './record.js';
export { formatDeliveries, formatTrace, operatorLine, relative } from './timeline.js';
export { runNoteWriter } from './operator.js';
