/**
 * `switchyard`: the handler kit. What a handler module imports: defineHandler
 * and its options, the event catalogue's names and types, the errors a handler
 * throws, the settings helpers of the recipes, and (re-exported from
 * `switchyard/api`, the same classes) the errors a `ctx.api` call throws and the
 * API's record types.
 *
 * The other entry points: `switchyard/api` (the REST client on its own),
 * `switchyard/sandbox` (the simulated workspace) and `switchyard/testing`
 * (helpers for a handler's tests). Nothing else of the package is public.
 * @module
 */
export {
  defineHandler,
  isHandler,
  NonRetriableError,
  UnrecoverableError,
  ABILITIES,
  DEFAULT_RETRY,
  HandlerConfigError,
  HandlerDefinitionError,
  HandlerSettingsError,
  HandlerTimeoutError,
  type Ability,
  type Duration,
  type Handler,
  type HandlerApi,
  type HandlerContext,
  type HandlerDefinition,
  type Jsonified,
  type NoSettings,
  type RetryOptions,
  type RetryPolicy,
  type SettingProblem,
  type SettingsOf,
  type SettingsSchema,
  type Priority,
  type KeyOption,
  type BuiltinKey,
  type DebounceOptions,
  type FlowPolicy,
  type CancelOnEntry,
  type CancelOnOption,
  type HandlerState,
  type HandlerWorkspace,
  type KeyedMatch,
  type MatchOption,
  type SleepOptions,
  type StateOf,
  type StateOptions,
  type StateZodSchema,
  type WaitForEventOptions,
  type WorkflowContext,
  defineSchedule,
  isSchedule,
  type Schedule,
  type ScheduleContext,
  type ScheduleDefinition,
} from './handler/index.js';
export {
  EVENT_NAMES,
  isEventName,
  type EventName,
  type EventData,
  type WorkspaceEvent,
  DERIVED_EVENT_NAMES,
  isDerivedEvent,
  type DerivedEventName,
  type WebhookEventName,
} from './events/index.js';
export {
  parseBusinessHours,
  isOpen,
  closedPeriodStart,
  addBusinessTime,
  businessTimeBetween,
  BusinessHoursError,
  businessHoursSetting,
  durationSetting,
  type BusinessHours,
  type TextSetting,
} from './recipes/index.js';
export * from './api/public-errors.js';
export type * from './api/public-records.js';
