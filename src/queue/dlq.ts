import type { Job, Queue } from 'bullmq';
import { jobIdFor } from '../events/index.js';
import type { RedisClient } from '../redis/index.js';
import type { HandlerJobData } from './jobs.js';
import { FlowControl } from './flow.js';
import { BullFlowJobs } from './flow-adapter.js';
import { pauseState, resumeHandlers, type PauseRecord } from './pause.js';
import { deliveryBytes, type StoredDelivery } from './delivery.js';
import {
  EVENTS_QUEUE,
  HANDLER_QUEUE_BY_PRIORITY,
  HANDLER_QUEUES,
  isHandlerQueue,
  QUEUE_NAMES,
  SCHEDULES_QUEUE,
  type QueueName,
} from './names.js';
import { scheduleKey, tickOf, type ScheduleJobData } from './jobs.js';
import { handlerQueueList, type HandlerQueues } from './queues.js';
import { PRIORITIES } from '../util/index.js';

/**
 * The dead-letter queue is the failed sets of the BullMQ queues: `events`
 * jobs that could not be validated (raw body kept, reason from
 * InvalidDeliveryError), handler jobs (`handlers`, `handlers-high`,
 * `handlers-low`) that failed for good (the event and the handler's last
 * error), and schedule runs (`schedules`) that failed for good (the schedule
 * and its tick). All are kept (`removeOnFail: false`) until retried or purged here.
 */
export interface DeadEntry {
  readonly queue: QueueName;
  /** BullMQ job id (`d/<key>` or `d/<key>/<handler>`). */
  readonly id: string;
  readonly key: string;
  /** The event; `schedule` for a schedule run. */
  readonly event: string | null;
  /** The handler of a `handlers` job, the schedule of a `schedules` job; null for an `events` job. */
  readonly handler: string | null;
  readonly reason: string;
  /** When it failed for good (epoch ms). */
  readonly failedAt: number | null;
  readonly attempts: number;
  readonly receivedAt: string | null;
}

/** Every criterion given must hold. */
export interface DeadFilter {
  /** `handlers` means the handler runs of every priority; `handlers-high` / `handlers-low` one level only. */
  queue?: QueueName;
  event?: string;
  handler?: string;
  /** Case-insensitive substring of the reason. */
  reason?: string;
  /** Failed at or after this epoch ms. */
  since?: number;
  /** Failed before this epoch ms. */
  before?: number;
  limit?: number;
}

/** What DLQ tooling needs: the queues and a plain connection on the same prefix. */
export interface DlqQueues {
  readonly events: Queue;
  readonly handlers: HandlerQueues;
  readonly schedules: Queue;
  readonly redis: RedisClient;
  readonly prefix: string;
}

/** One entry from a failed job of either queue. */
export function entryOf(queue: QueueName, job: Job): DeadEntry {
  const base = { queue, id: String(job.id), reason: job.failedReason ?? '', failedAt: job.finishedOn ?? null, attempts: job.attemptsMade };
  if (queue === EVENTS_QUEUE) {
    const d = job.data as StoredDelivery;
    return { ...base, key: d.key, event: d.name ?? null, handler: null, receivedAt: d.receivedAt ?? null };
  }
  if (queue === SCHEDULES_QUEUE) {
    const { scheduleId } = job.data as ScheduleJobData;
    const tick = tickOf({ id: String(job.id), timestamp: job.timestamp, delay: job.opts.delay ?? 0 });
    return {
      ...base,
      key: scheduleKey(scheduleId, tick),
      event: 'schedule',
      handler: scheduleId,
      receivedAt: new Date(tick).toISOString(),
    };
  }
  const d = job.data as HandlerJobData;
  return { ...base, key: d.key, event: d.event?.name ?? null, handler: d.handlerId ?? job.name, receivedAt: d.receivedAt ?? null };
}

function matches(e: DeadEntry, f: DeadFilter): boolean {
  if (f.queue && !queuesOf(f.queue).includes(e.queue)) return false;
  if (f.event && e.event !== f.event) return false;
  if (f.handler && e.handler !== f.handler) return false;
  if (f.reason && !e.reason.toLowerCase().includes(f.reason.toLowerCase())) return false;
  if (f.since !== undefined && (e.failedAt === null || e.failedAt < f.since)) return false;
  if (f.before !== undefined && (e.failedAt === null || e.failedAt >= f.before)) return false;
  return true;
}

const PAGE = 500;

/** The queues a `--queue` filter names: `handlers` stands for the handler runs of every priority. */
function queuesOf(name: QueueName): readonly QueueName[] {
  return name === HANDLER_QUEUE_BY_PRIORITY.normal ? HANDLER_QUEUES : [name];
}

function queueOf(q: DlqQueues, name: QueueName): Queue {
  if (name === EVENTS_QUEUE) return q.events;
  if (name === SCHEDULES_QUEUE) return q.schedules;
  const p = PRIORITIES.find((x) => HANDLER_QUEUE_BY_PRIORITY[x] === name);
  return q.handlers[p ?? 'normal'];
}

/** Failed jobs of one queue with their entries, newest first, in pages (never the whole set in one reply). */
async function* failedJobs(q: DlqQueues, name: QueueName): AsyncGenerator<{ job: Job; entry: DeadEntry }> {
  const queue = queueOf(q, name);
  const seen = new Set<string>();
  for (let start = 0; ; start += PAGE) {
    const jobs = (await queue.getJobs(['failed'], start, start + PAGE - 1, false)) as Job[];
    for (const job of jobs) {
      if (!job || seen.has(String(job.id))) continue;
      seen.add(String(job.id));
      yield { job, entry: entryOf(name, job) };
    }
    if (jobs.length < PAGE) return;
  }
}

async function collect(q: DlqQueues, f: DeadFilter): Promise<{ job: Job; entry: DeadEntry }[]> {
  const out: { job: Job; entry: DeadEntry }[] = [];
  const queues: readonly QueueName[] = f.queue ? queuesOf(f.queue) : QUEUE_NAMES;
  for (const name of queues) {
    for await (const item of failedJobs(q, name)) {
      if (!matches(item.entry, f)) continue;
      out.push(item);
      if (f.limit !== undefined && out.length >= f.limit) return out;
    }
  }
  return out;
}

/** Dead-lettered deliveries, handler runs and schedule runs matching the filter (in that order of queues; newest first in each). */
export async function listDead(q: DlqQueues, f: DeadFilter = {}): Promise<DeadEntry[]> {
  return (await collect(q, f)).map((x) => x.entry);
}

/** Everything `dlq show` prints about one dead job. */
export interface DeadDetail extends DeadEntry {
  /** `events`: the raw body as received; `handlers`: the validated event as JSON; `schedules`: the schedule and its tick. */
  readonly payload: string;
  /** Stack traces of the failed attempts (BullMQ keeps the latest ones). */
  readonly stacktrace: readonly string[];
  readonly createdAt: number;
  readonly processedOn: number | null;
  readonly maxAttempts: number;
}

function detailOf(queue: QueueName, job: Job): DeadDetail {
  const entry = entryOf(queue, job);
  const payload =
    queue === EVENTS_QUEUE
      ? deliveryBytes(job.data as StoredDelivery).toString('utf8')
      : queue === SCHEDULES_QUEUE
        ? JSON.stringify({ schedule: entry.handler, tick: entry.receivedAt }, null, 2)
        : JSON.stringify((job.data as HandlerJobData).event, null, 2);
  return {
    ...entry,
    payload,
    stacktrace: job.stacktrace ?? [],
    createdAt: job.timestamp,
    processedOn: job.processedOn ?? null,
    maxAttempts: job.opts.attempts ?? 1,
  };
}

/**
 * The dead jobs named by `ref`: a job id as `dlq list` prints it, or a delivery
 * key (its `events` job and every failed `handlers` job of that delivery; a
 * schedule run's `schedule:<id>:<tick>`).
 */
export async function showDead(q: DlqQueues, ref: string): Promise<DeadDetail[]> {
  const out: DeadDetail[] = [];
  for (const name of QUEUE_NAMES) {
    const job = (await queueOf(q, name).getJob(ref)) as Job | undefined;
    if (job && (await job.isFailed())) out.push(detailOf(name, job));
  }
  if (out.length > 0) return out;
  const evJob = (await q.events.getJob(jobIdFor(ref))) as Job | undefined;
  if (evJob && (await evJob.isFailed())) out.push(detailOf(EVENTS_QUEUE, evJob));
  const keyed: readonly QueueName[] = [...HANDLER_QUEUES, SCHEDULES_QUEUE];
  for (const name of keyed) {
    for await (const { job, entry } of failedJobs(q, name)) if (entry.key === ref) out.push(detailOf(name, job));
  }
  return out;
}

/**
 * Moves matching dead jobs back to waiting with their attempts reset, so a
 * fixed handler (or, for `events` jobs, a handler that now subscribes) gets a
 * full set of retries. Returns what was retried; a job that changed state
 * meanwhile (another process retried it) is skipped. A retried run that holds
 * its key (`onDead: 'block'`) is still its line's head: it runs first, at once,
 * and its release starts the next run (src/queue/flow.ts).
 */
export async function retryDead(q: DlqQueues, f: DeadFilter = {}): Promise<DeadEntry[]> {
  const done: DeadEntry[] = [];
  for (const { job, entry } of await collect(q, f)) {
    try {
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      done.push(entry);
    } catch {
      /* no longer failed: retried or removed by someone else */
    }
  }
  return done;
}

/**
 * Deletes matching dead jobs for good. The dedupe keys stay, so a resend of
 * the same delivery is still a duplicate. A purged run of an ordered handler
 * gives up its place (FlowControl.purged): when it was holding its key
 * (`onDead: 'block'`), the next run of that key starts at once, promoted if it
 * waits parked.
 */
export async function purgeDead(q: DlqQueues, f: DeadFilter = {}): Promise<DeadEntry[]> {
  const done: DeadEntry[] = [];
  const flow = new FlowControl(q.redis, q.prefix, new BullFlowJobs(q.handlers), { keepMs: PURGED_MARKER_MS });
  for (const { job, entry } of await collect(q, f)) {
    try {
      await job.remove();
      done.push(entry);
    } catch {
      /* removed meanwhile, or locked */
      continue;
    }
    if (isHandlerQueue(entry.queue)) await flow.purged({ id: entry.id, data: job.data as HandlerJobData });
  }
  return done;
}

/** How long a purged ordered run's marker stays (a repeated fan-out of its delivery adds nothing meanwhile). */
const PURGED_MARKER_MS = 7 * 86_400_000;

async function anyPaused(queues: HandlerQueues): Promise<boolean> {
  return (await Promise.all(handlerQueueList(queues).map((x) => x.isPaused()))).some(Boolean);
}

/** Whether the handler queues are paused, and why (an unusable API token). */
export async function pauseStatus(q: DlqQueues): Promise<{ paused: boolean; record: PauseRecord | null }> {
  const [paused, record] = await Promise.all([anyPaused(q.handlers), pauseState(q.redis, q.prefix)]);
  return { paused, record };
}

/** Resumes handler queues paused for an auth error; returns the pause record it cleared (null when none). */
export async function resumeDead(q: DlqQueues): Promise<{ wasPaused: boolean; record: PauseRecord | null }> {
  const wasPaused = await anyPaused(q.handlers);
  const record = await resumeHandlers(q.redis, q.handlers, q.prefix);
  return { wasPaused, record };
}
