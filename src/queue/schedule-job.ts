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
}

/** The tick a scheduler's job runs for: BullMQ names them `repeat:<scheduler id>:<ms>`. */
export function tickOf(job: Pick<ScheduleJobView, 'id' | 'timestamp' | 'delay'>): number {
  const m = /:(\d+)$/.exec(job.id);
  return m ? Number(m[1]) : job.timestamp + job.delay;
}

/** The delivery key of one run: `schedule:<id>:<tick ISO>` (Idempotency-Keys and steps derive from it). */
export const scheduleKey = (id: string, tickMs: number): string => `schedule:${id}:${new Date(tickMs).toISOString()}`;

