/** The surface of src/handler/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export {
  ABILITIES,
  DEFAULT_RETRY,
  HandlerConfigError,
  HandlerDefinitionError,
  HandlerTimeoutError,
  NonRetriableError,
  UnrecoverableError,
  defineHandler,
  isHandler,
  type Ability,
  type BuiltinKey,
  type CancelOnEntry,
  type CancelOnOption,
  type DebounceOptions,
  type Duration,
  type Handler,
  type HandlerApi,
  type HandlerContext,
  type HandlerDefinition,
  type HandlerState,
  type HandlerWorkspace,
  type Jsonified,
  type KeyedMatch,
  type MatchOption,
  type NoSettings,
  type Priority,
  type RetryOptions,
  type RetryPolicy,
  type SettingProblem,
  type SettingsOf,
  type SettingsSchema,
  type SleepOptions,
  type StateOf,
  type StateOptions,
  type StateZodSchema,
  type WaitForEventOptions,
  type WorkflowContext,
} from './define.js';
export { dropSecrets, handlerEnv } from './env.js';
export { HandlerSettingsError, isNonRetriable } from './errors.js';
export { loadHandlerDir, loadHandlers, selectHandlers } from './loader.js';
export { describeRetry, formatDuration } from './options.js';
export { DEFAULT_RUN_POLICY, describeRunPolicy, keyOf, type FlowPolicy, type KeyOption } from './run-policy.js';
export {
  checkScheduleWorkspaces,
  defineSchedule,
  describeSchedule,
  isSchedule,
  runsIn,
  type Schedule,
  type ScheduleContext,
  type ScheduleDefinition,
} from './schedule.js';
export { HandlerSet, handlerSnapshot } from './set.js';
export { parseSettings, readHandlerSettings, settingProblems, settingVariables, settingsInput, type SettingVariable } from './settings.js';
export { checkStateValue, stateLabel, type StateSchema } from './state-value.js';
export { watchHandlers } from './watch-reload.js';
export {
  DEFAULT_MAX_WAIT_MS,
  callLabel,
  checkName,
  checkReach,
  durationMs,
  durationValue,
  limitsFromEnv,
  nameTwice,
  ownKey,
  sleepOptions,
  takes,
  timeMs,
  timeValue,
  waitCall,
  type WaitCall,
  type WorkflowLimits,
} from './workflow-calls.js';
export { NO_WORKFLOW, type WorkflowPolicy } from './workflow-policy.js';
export type { HandlerSnapshot } from './set.js';
