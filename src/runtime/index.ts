/** The surface of src/runtime/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { devPlan, type DevSandboxPlan } from './dev-env.js';
export { startService, type ServiceOptions } from './service.js';
export { StateDirBusyError, living, lockStateDir, startTicks, type StateOwner } from './state-lock.js';
export { loadWorker, prepareWorker } from './worker.js';
