/**
 * Public API of Switchyard: handler definitions and event types, the workspace
 * REST client, and the receiver for embedding in another Hono/Node server.
 * @module
 */
export { defineHandler, isHandler, UnrecoverableError, ABILITIES, type Ability, type Handler, type HandlerContext, type HandlerDefinition } from './handler.js';
export { EVENT_NAMES, EVENT_SCHEMAS, isEventName, validateEvent, type EventName, type EventData, type WorkspaceEvent } from './events/catalogue.js';
export { parseEnvelope, type Envelope } from './events/envelope.js';
export { sign, verify, type VerifyResult, type VerifyFailure } from './signature.js';
export { loadConfig, ConfigError, type Config } from './config.js';
export { HandlerConfigError } from './worker/classify.js';
export * from './api/index.js';
export { createReceiverApp as createReceiver, type ReceiverAppOptions, type DeliverySink } from './receiver/index.js';
export { startService, type RunningService, type ServiceOptions } from './runtime/service.js';
export * from './recipes/index.js';
