import { Queue } from 'bullmq';
import { PRIORITIES, type Priority } from '../util/index.js';
import { EVENTS_QUEUE, HANDLER_QUEUE_BY_PRIORITY, POLLS_QUEUE, RECONCILE_QUEUE, SCHEDULES_QUEUE } from './names.js';
import type { RedisClient } from '../redis/index.js';

/** The handler-run queue of each priority. */
export type HandlerQueues = { readonly [P in Priority]: Queue };

export interface Queues {
  readonly events: Queue;
  readonly handlers: HandlerQueues;
  /** Schedule runs (one job per tick). */
  readonly schedules: Queue;
  /**
   * Every queue: `events`, the handler queues highest priority first, then the timed
   * ones (`schedules`, `polls`, `reconcile`): what the dashboard and the queue metrics show.
   */
  readonly all: readonly Queue[];
  close(): Promise<void>;
}

/** The handler queues of every priority on one connection. */
export function openHandlerQueues(connection: RedisClient, prefix: string): HandlerQueues {
  const entries = PRIORITIES.map((p) => [p, new Queue(HANDLER_QUEUE_BY_PRIORITY[p], { connection, prefix })] as const);
  return Object.freeze(Object.fromEntries(entries) as Record<Priority, Queue>);
}

/** The handler queues as a list, highest priority first. */
export function handlerQueueList(queues: HandlerQueues): Queue[] {
  return PRIORITIES.map((p) => queues[p]);
}

/** The BullMQ queues (events, handlers by priority, the timed ones) on one connection, under the configured prefix. */
export function openQueues(connection: RedisClient, prefix: string): Queues {
  const events = new Queue(EVENTS_QUEUE, { connection, prefix });
  const handlers = openHandlerQueues(connection, prefix);
  const schedules = new Queue(SCHEDULES_QUEUE, { connection, prefix });
  const timed = [schedules, ...[POLLS_QUEUE, RECONCILE_QUEUE].map((name) => new Queue(name, { connection, prefix }))];
  const all = [events, ...handlerQueueList(handlers), ...timed];
  // Connection errors surface where commands fail (pump, workers) and are logged there.
  for (const q of all) q.on('error', () => undefined);
  return {
    events,
    handlers,
    schedules,
    all,
    close: async () => {
      await Promise.allSettled(all.map((q) => q.close()));
    },
  };
}
