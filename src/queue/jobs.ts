import type { EventName, WorkspaceEvent } from '../events/catalogue.js';

/** Data of a `handlers` job: one handler's run for one validated delivery. */
export interface HandlerJobData {
  readonly key: string;
  readonly handlerId: string;
  readonly receivedAt: string;
  readonly event: {
    readonly id: string | null;
    readonly name: EventName;
    readonly createdAt: string | null;
    readonly data: unknown;
  };
  /** Set for a delivery synthesized by `switchyard reconcile` (absent: a webhook). */
  readonly source?: 'reconcile' | 'poll';
  /** Set for a handler with `orderBy`: the run's place in its key's line (src/queue/order.ts). */
  readonly order?: OrderRef;
  /** Set for a handler with `debounce`: the job runs its key's burst (src/queue/debounce.ts). */
  readonly debounce?: DebounceRef;
  /** W3C trace context of the fan-out span (only when tracing is on; src/telemetry). */
  readonly traceparent?: string;
}

/** Where a run stands in its key's line. */
export interface OrderRef {
  /** The handler's key of the event (`conversation:42`). */
  readonly key: string;
  /** Member of the line: receipt time, then job id. */
  readonly member: string;
  /** The event's creation time (ms), its place in the line. */
  readonly at: number;
}

/** Which burst a debounced job runs. */
export interface DebounceRef {
  readonly key: string;
}

/** The typed event a handler receives, from a job's data (validated at fan-out). */
export function eventOf(job: HandlerJobData): WorkspaceEvent {
  return job.event as WorkspaceEvent;
}
