/** The surface of src/rerun/ for the rest of src/ (docs/architecture.md, "Surfaces"): `switchyard rerun`'s engine. @module */
export { eventOfBody, eventsJobBodies, firstOf, keptBodies, rerunBodies, type BodyReader } from './bodies.js';
export {
  listReruns,
  rerunFailures,
  rerunStatus,
  startRerun,
  UnknownBatchError,
  type BatchState,
  type RerunStatus,
  type StartedRerun,
} from './batch.js';
export { cancelRerun, type CancelledRerun } from './cancel.js';
export { feedWindow, type FeedContext } from './context.js';
export type { RerunBudget, RerunDeps } from './deps.js';
export { feedBatch, RERUN_JOB_PRIORITY } from './feed.js';
export { startRerunFeeder, type FeederOptions, type RerunFeeder } from './feeder.js';
export { BATCH_ID, itemJobId, rerunKeys } from './keys.js';
export { rerunDelivery, type OneRerun, type StartedOne } from './one.js';
export { estimateMs, planRerun, type RerunPlan } from './plan.js';
export { RerunSelectionError, selectedHandler, type RerunItem, type RerunSelection } from './selection.js';
export { trackBatch } from './track.js';
