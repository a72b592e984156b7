/** The worker's lifecycle stream: its events and the bus observers subscribe to. */
export type * from './events.js';
export { LifecycleBus, type AttemptObserver, type LifecycleSubscriber, type Scope } from './bus.js';
