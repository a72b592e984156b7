import { jobIdFor, type EventName, type WorkspaceEvent } from '../events/index.js';

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
  /** Set once the run parked in a sleep or wait: it has a record to resume from (src/queue/waits/runs.ts). */
  readonly parked?: true;
  /** Set for a run started by `switchyard rerun`: a new run of a delivery that already ran (see {@link RerunRef}). */
  readonly rerun?: RerunRef;
}

/**
 * A re-run of one delivery by one handler (`switchyard rerun`): a new run, not a retry. Its Idempotency-Keys and
 * step results derive from `id`, not from the delivery key alone, so it can write again; its history is linked to
 * the original run's (`of`) and to its batch. Its job id is {@link rerunJobId} (also how `trace` names it); its data
 * is the original's delivery (key, handlerId, receivedAt, event, source): the worker runs it outside its key's
 * order line and debounce burst (`order` and `debounce` are ignored) and without the maxAge and skipStale checks
 * (src/worker/flow-checks.ts), and a re-run that has not parked yet should not carry `parked`.
 */
export interface RerunRef {
  /** This re-run's id, unique per re-run of one delivery by one handler. */
  readonly id: string;
  /** The original run's job id (`d/<key>/<handler>`). */
  readonly of: string;
  /** The batch that started it; absent for a re-run of one delivery. */
  readonly batch?: string;
  /** Re-run from this step: the steps before it return what they returned in the original run. */
  readonly fromStep?: string;
}

/**
 * The job id of a re-run, and how `trace` names it: `r/<key>/<handler>/<rerun id>`, escaped as {@link jobIdFor}
 * escapes (the original's `d/<key>/<handler>` with `r/` and the re-run's id). Its `ctx.step` results, durable
 * record and history live under it, so a retry of the re-run job finds them and a new re-run does not.
 */
export function rerunJobId(key: string, handlerId: string, rerunId: string): string {
  return `r/${jobIdFor(key, handlerId).slice(2)}/${jobIdFor(rerunId).slice(2)}`;
}

/** The delivery key, handler and re-run id a {@link rerunJobId} names; null for anything else. */
export function parseRerunJobId(ref: string): { key: string; handlerId: string; rerunId: string } | null {
  const m = /^r\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(ref);
  if (!m) return null;
  const unesc = (s: string): string | null =>
    /%(?!25|3A|2F)/i.test(s) ? null : s.replace(/%3A/gi, ':').replace(/%2F/gi, '/').replace(/%25/g, '%');
  const [key, handlerId, rerunId] = [unesc(m[1] as string), unesc(m[2] as string), unesc(m[3] as string)];
  return key === null || handlerId === null || rerunId === null ? null : { key, handlerId, rerunId };
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

/** Data of a schedule's job (the template of its job scheduler). */
export interface ScheduleJobData {
  readonly scheduleId: string;
}

/** The part of a schedule job the processor reads. */
export interface ScheduleJobView {
  readonly id: string;
  readonly data: ScheduleJobData;
  /** When the job was created (ms), the fallback for its tick. */
  readonly timestamp: number;
  readonly delay: number;
  readonly attemptsMade: number;
  /** Runs in all before the run is dead-lettered (its schedule's `retry.attempts`); history reads it. */
  readonly attempts?: number;
}

/** The tick a scheduler's job runs for: BullMQ names them `repeat:<scheduler id>:<ms>`. */
export function tickOf(job: Pick<ScheduleJobView, 'id' | 'timestamp' | 'delay'>): number {
  const m = /:(\d+)$/.exec(job.id);
  return m ? Number(m[1]) : job.timestamp + job.delay;
}

/** The delivery key of one run: `schedule:<id>:<tick ISO>` (Idempotency-Keys and steps derive from it). */
export const scheduleKey = (id: string, tickMs: number): string => `schedule:${id}:${new Date(tickMs).toISOString()}`;

/** The job id BullMQ gives a scheduler's run for one tick (`repeat:<scheduler id>:<ms>`). */
export const scheduleJobId = (id: string, tickMs: number): string => `repeat:${id}:${tickMs}`;

/**
 * The schedule and tick a reference names: a run's key (`schedule:<id>:<tick ISO>`) or its job id (`repeat:<id>:<ms>`);
 * null for anything else.
 */
export function parseScheduleRef(ref: string): { id: string; tickMs: number } | null {
  const job = /^repeat:(.+):(\d+)$/.exec(ref);
  if (job) return { id: job[1] as string, tickMs: Number(job[2]) };
  const key = /^schedule:(.+):(\d{4}-\d\d-\d\dT[\d:.]+Z)$/.exec(ref);
  const tickMs = key ? Date.parse(key[2] as string) : Number.NaN;
  return key && Number.isFinite(tickMs) ? { id: key[1] as string, tickMs } : null;
}
