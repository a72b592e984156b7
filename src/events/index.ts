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
