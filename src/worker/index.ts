/** The surface of src/worker/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { onAttempt } from './classify.js';
export { runWorkspace, type ContextDeps } from './context.js';
export { deterministicKeys, runScope } from './derived-keys.js';
export { dispatch, subscribers } from './dispatcher.js';
export { createHandlerProcessor, type HandlerJobDecision, type HandlerJobView } from './processor.js';
export { runHandler, type RunOutcome } from './runner.js';
export { FromStepError, type FromStep } from './from-step.js';
export {
  MemoryStepStore,
  RedisStepStore,
  originalSteps,
  stepResultsTtlMs,
  type CompletedStep,
  type KeptStep,
  type StepStore,
} from './steps.js';
export { jsonCopy, type StoredState, type VirtualStateStore } from './virtual-state.js';
export {
  durationOf,
  timeOf,
  virtualWorkflow,
  withVirtualWorkflow,
  type Arrival,
  type VirtualWait,
  type WorkflowEntry,
  type WorkflowRecord,
} from './virtual-workflow.js';
export { sweepWakes } from './waits.js';
export { eventsProcessor } from './fan-out.js';
export { handlerJobProcessor, parkedRunWaker } from './job-moves.js';
export { eventChecks } from './waits.js';
export { startWakeSweeper } from './wake-sweeper.js';
export { createFairPools, currentFairSlot, fairProcessor, type FairPools, type FairShare } from './fair.js';
