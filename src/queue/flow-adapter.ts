import { Job, UnrecoverableError as BullmqUnrecoverableError } from 'bullmq';
import type { Logger } from '../log/index.js';
import type { DeadPolicy } from './flow-dead.js';
import type { StoredDelivery } from './delivery.js';
import type { HandlerJobData } from './jobs.js';
import type { FlowControl } from './flow.js';
import { PRIORITIES } from '../util/index.js';
import type { FlowJobs } from './flow.js';
import type { QueuedJob } from './order.js';
import type { HandlerQueues } from './queues.js';

/**
 * Flow control's BullMQ side (src/queue/flow.ts): the one place that adds,
 * promotes or judges handler jobs for it.
 */
export class BullFlowJobs implements FlowJobs {
  constructor(private readonly queues: HandlerQueues) {}

  async add(jobs: readonly QueuedJob[]): Promise<void> {
    // The common fan-out, one run: its script call, without a pass over the priorities.
    if (jobs.length === 1) {
      const [job] = jobs as [QueuedJob];
      await this.queues[job.priority].add(job.name, job.data, job.opts);
      return;
    }
    await Promise.all(
      PRIORITIES.map(async (p) => {
        const mine = jobs.filter((j) => j.priority === p);
        // One job (the common fan-out: one subscriber per priority) is one script call; addBulk wraps even
        // one in a MULTI, and an ioredis pipeline on a connection with BullMQ's scripts costs ~100 µs to build.
        if (mine.length === 1) await this.queues[p].add(mine[0]!.name, mine[0]!.data, mine[0]!.opts);
        else if (mine.length > 1) await this.queues[p].addBulk(mine.map((j) => ({ name: j.name, data: j.data, opts: j.opts })));
      }),
    );
  }

  async handOver(job: QueuedJob, parked: boolean): Promise<void> {
    const queue = this.queues[job.priority];
    if (!parked) {
      await queue.add(job.name, job.data, job.opts);
      return;
    }
    // Parked (delayed) until its turn: move it to waiting. It may have woken up on its own meanwhile, or be gone.
    const existing = await Job.fromId(queue, job.opts.jobId);
    if (!existing) await queue.add(job.name, job.data, job.opts);
    else await existing.promote().catch(() => undefined);
  }

  failsForGood(err: unknown): boolean {
    return err instanceof BullmqUnrecoverableError;
  }
}

/** Whether a job BullMQ reports failed is dead-lettered (no attempt left, or unrecoverable) rather than to be retried. */
export function failedForGood(
  job: { readonly attemptsMade: number; readonly opts: { readonly attempts?: number | undefined } },
  err: Error,
): boolean {
  return err instanceof BullmqUnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
}

/**
 * Flow control's part when BullMQ reports a job failed for good (retries spent, or unrecoverable; also a
 * run that stalled too often, which the processor never saw): an `events` job leaves the pending fan-out
 * set, a handler run's key goes on as its handler's onDead says. Returns a listener for the worker's
 * `failed` event; `settled()` waits for what the listeners started (before the connection closes).
 */
export function flowFailedListener(
  flow: Pick<FlowControl, 'fannedOut' | 'onDead'>,
  kind: 'events' | 'handlers',
  handlerOf: (id: string) => DeadPolicy | undefined,
  log: Logger,
): { listener: (job: Job | undefined, err: Error) => void; settled(): Promise<void> } {
  const inFlight = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  return {
    listener: (job: Job | undefined, err: Error) => {
      if (!job || !failedForGood(job, err)) return;
      log.error({ queue: job.queueName, job: job.id, reason: err.message }, 'dead-lettered');
      if (kind === 'events') {
        track(flow.fannedOut((job.data as Partial<StoredDelivery>).key ?? ''));
        return;
      }
      const data = job.data as HandlerJobData;
      track(
        flow
          .onDead({ id: String(job.id), data }, handlerOf(data.handlerId))
          .catch((e: unknown) => log.warn({ job: job.id, err: String(e) }, 'could not release the key of a dead-lettered ordered run')),
      );
    },
    settled: async () => {
      await Promise.allSettled([...inFlight]);
    },
  };
}
