/** A schedule run's job in the `schedules` queue, as the worker and the dead-letter tools read it. */

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

/** The schedule and tick a reference names: a run's key (`schedule:<id>:<tick ISO>`) or its job id (`repeat:<id>:<ms>`); null for anything else. */
export function parseScheduleRef(ref: string): { id: string; tickMs: number } | null {
  const job = /^repeat:(.+):(\d+)$/.exec(ref);
  if (job) return { id: job[1] as string, tickMs: Number(job[2]) };
  const key = /^schedule:(.+):(\d{4}-\d\d-\d\dT[\d:.]+Z)$/.exec(ref);
  const tickMs = key ? Date.parse(key[2] as string) : Number.NaN;
  return key && Number.isFinite(tickMs) ? { id: key[1] as string, tickMs } : null;
}
