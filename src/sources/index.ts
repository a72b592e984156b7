/** The surface of src/sources/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { snapshotSource } from './poll/snapshot.js';
export { formatReport, reconcile, reconcileClient } from './reconcile/index.js';
export { scheduleHandler, scheduleRunJob } from './schedule/processor.js';
export { nextRun } from './schedule/repeat.js';
export { checkSchedulesFor } from './schedule/workspaces.js';
export { startSources } from './start-sources.js';
