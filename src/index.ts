/**
 * Public API of Switchyard: handler definitions and event types, the workspace
 * REST client, and the receiver for embedding in another Hono/Node server.
 * @module
 */
export {
  defineHandler, isHandler, UnrecoverableError, ABILITIES, DEFAULT_RETRY, HandlerConfigError, HandlerDefinitionError, HandlerSettingsError, HandlerTimeoutError,
  type Ability, type Duration, type Handler, type HandlerApi, type HandlerContext, type HandlerDefinition, type Jsonified, type RetryOptions, type SettingsSchema,
} from './handler.js';
export { EVENT_NAMES, EVENT_SCHEMAS, isEventName, validateEvent, type EventName, type EventData, type WorkspaceEvent } from './events/catalogue.js';
export { parseEnvelope, type Envelope } from './events/envelope.js';
export { sign, verify, type VerifyResult, type VerifyFailure } from './signature.js';
export { loadConfig, ConfigError, type Config } from './config.js';
export * from './api/index.js';
export { createReceiverApp as createReceiver, type ReceiverAppOptions, type DeliverySink } from './receiver/index.js';
export { startService, type RunningService, type ServiceOptions } from './runtime/service.js';
export * from './recipes/index.js';
