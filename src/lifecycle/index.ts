/** The lifecycle streams of a process: the worker's and the ingest path's, their events and the buses observers subscribe to. */
export type * from './events.js';
export type * from './ingest-events.js';
export { LifecycleBus, type AttemptObserver, type LifecycleSubscriber, type Scope } from './bus.js';
export { IngestBus, type IngestSubscriber } from './ingest-bus.js';
