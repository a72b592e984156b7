/** Public surface of src/events: envelope parsing and keys, the fixture format, the event catalogue. */
export { bodyKey, jobIdFor, parseEnvelope, type Envelope, type EnvelopeProblem } from './envelope.js';
export { Fixture, fixtureBytes, toFixture } from './fixture.js';
export {
  EVENT_NAMES,
  EVENT_SCHEMAS,
  isEventName,
  suggestEventName,
  validateEvent,
  type EventData,
  type EventName,
  type InvalidEventReason,
  type KnownFields,
  type ValidationResult,
  type WorkspaceEvent,
} from './catalogue.js';
export { eventFields, type EventField } from './fields.js';
export {
  WHERE_OPS,
  WhereError,
  matchesCondition,
  matchesWhere,
  parseWhere,
  parseWheres,
  type WhereCondition,
  type WhereOp,
  type WhereQuery,
} from './where.js';
export { bytesOf, textOrBase64 } from './body.js';
export { DERIVED_EVENT_NAMES, isDerivedEvent, type DerivedEventName, type WebhookEventName } from './catalogue.js';
export {
  CHANGE_KEY_EVENTS,
  SNAPSHOT_EVENTS,
  changeKey,
  hasChangeKey,
  instant,
  isRepeatableChange,
  reconcileDeliveryKey,
  reconciledAfter,
  type ChangeKeyEvent,
  type SnapshotEvent,
} from './change-key.js';
export { parseJobId } from './envelope.js';
export { sign, verify } from './signature.js';
