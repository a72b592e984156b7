export { EVENTS_QUEUE, HANDLERS_QUEUE, QUEUE_NAMES, ingestKeys, type QueueName } from './names.js';
export { encodeBody, deliveryBytes, KEPT_HEADERS, type DeliverySink, type StoredDelivery } from './delivery.js';
export { IngestStore, type IngestOutcome } from './ingest.js';
export { IngestPump, type IngestPumpOptions } from './pump.js';
export { EVENTS_JOB_OPTIONS, handlerJobOptions, type HandlerJobRetry } from './job-options.js';
export { openQueues, type Queues } from './queues.js';
export { ChangeClaims, type ChangeClaimant } from './change.js';
export {
  listDead,
  pauseStatus,
  purgeDead,
  resumeDead,
  retryDead,
  showDead,
  type DeadEntry,
  type DeadFilter,
  type DlqQueues,
} from './dlq.js';
export { BullFlowJobs, flowFailedListener } from './flow-adapter.js';
export { FlowControl } from './flow.js';
export {
  eventOf,
  parseRerunJobId,
  parseScheduleRef,
  rerunJobId,
  scheduleJobId,
  scheduleKey,
  tickOf,
  type HandlerJobData,
  type RerunRef,
  type OrderRef,
  type ScheduleJobData,
  type ScheduleJobView,
} from './jobs.js';
export { HANDLER_QUEUE_BY_PRIORITY, POLLS_QUEUE, RECONCILE_QUEUE, SCHEDULES_QUEUE, isHandlerQueue } from './names.js';
export { orderMember, type QueuedJob } from './order.js';
export { pauseHandlers, pauseState, resumeHandlers, tokenHash } from './pause.js';
export { handlerQueueList, openHandlerQueues, type HandlerQueues } from './queues.js';
export { HandlerStateStore, type StateValue } from './state/state-store.js';
export { decodeReached, defaultWaitId, encodeReached, waitIdsOf, type Reached } from './waits/reached.js';
export {
  CANCEL_ON_IDS,
  RunRefError,
  cancelCommandFor,
  cancelParkedRuns,
  filterParkedRuns,
  matchesRunFilter,
  orphanedRuns,
  resolveParkedRun,
  selectParkedRuns,
  wakeParkedRun,
  type CancelResult,
  type ParkedRunDeps,
  type RunActor,
  type RunFilter,
  type RunNote,
  type RunNoteSink,
  type WakeResult,
} from './waits/ops.js';
export { RunRecords, type ParkedRun } from './waits/runs.js';
export { WaitStore, type WaitState, type WokenRun } from './waits/wait-store.js';
export { WorldMark, fixedWorld, markWorld, newWorldName, readWorld, worldAt, type WorldSource } from './world.js';
export type { DeadDetail } from './dlq.js';
export { FanOutChecks } from './fan-out-check.js';
export { FAN_OUT_CHECK_SCRIPT } from './scripts.js';
export { resumeIfTokenChanged } from './pause.js';
