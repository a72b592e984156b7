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
}

/** The typed event a handler receives, from a job's data (validated at fan-out). */
export function eventOf(job: HandlerJobData): WorkspaceEvent {
  return job.event as WorkspaceEvent;
}
