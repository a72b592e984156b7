import type { Priority } from '../util/index.js';

/** Queue of verified deliveries: one job per delivery, fanned out by the dispatcher. */
export const EVENTS_QUEUE = 'events';
/** Queue of `normal` handler runs: one job per (delivery, subscribed handler). The name predates priorities. */
export const HANDLERS_QUEUE = 'handlers';
/**
 * The handler-run queue of each priority. Each has its own worker slots in
 * every worker process, so a `high` run never waits for a slot held by a
 * lower run (which may itself be waiting for the API budget).
 */
export const HANDLER_QUEUE_BY_PRIORITY = { high: 'handlers-high', normal: HANDLERS_QUEUE, low: 'handlers-low' } as const satisfies {
  readonly [P in Priority]: string;
};
/** Handler-run queues, highest priority first. */
export const HANDLER_QUEUES = [
  'handlers-high',
  'handlers',
  'handlers-low',
] as const satisfies readonly (typeof HANDLER_QUEUE_BY_PRIORITY)[Priority][];
/** Queue of schedule runs: one BullMQ job scheduler per `defineSchedule`, so one job per tick across every worker. */
export const SCHEDULES_QUEUE = 'schedules';
/** Queue of polls of the derived events' sources: one job scheduler every POLL_EVERY while some handler subscribes. */
export const POLLS_QUEUE = 'polls';
/** Queue of scheduled reconcile runs (RECONCILE_EVERY). */
export const RECONCILE_QUEUE = 'reconcile';
/**
 * The queues whose failed jobs are the dead-letter queue: deliveries, handler runs
 * and schedule runs (a run lost for good unless retried). A failed poll or scheduled
 * reconcile is not: the next tick covers its window again.
 */
export const QUEUE_NAMES = [EVENTS_QUEUE, ...HANDLER_QUEUES, SCHEDULES_QUEUE] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];
export type HandlerQueueName = (typeof HANDLER_QUEUES)[number];

/** True for a queue of handler runs (any priority). */
export function isHandlerQueue(name: string): name is HandlerQueueName {
  return (HANDLER_QUEUES as readonly string[]).includes(name);
}

/**
 * Redis keys Switchyard owns besides BullMQ's. All share the queue prefix, so
 * a hash-tagged prefix (`{switchyard}`) keeps every key in one Cluster slot,
 * which the multi-key Lua scripts require.
 */
export function ingestKeys(prefix: string) {
  return {
    dedupe: (key: string) => `${prefix}:dedupe:${key}`,
    inbox: `${prefix}:ingest:inbox`,
    inflight: (pumpId: string) => `${prefix}:ingest:inflight:${pumpId}`,
    /** Inbox items no pump could decode, set aside (never dropped) for an operator. */
    unreadable: `${prefix}:ingest:unreadable`,
    pumps: `${prefix}:ingest:pumps`,
    heartbeat: (pumpId: string) => `${prefix}:ingest:pump:${pumpId}`,
    readiness: `${prefix}:readyz`,
    /**
     * Deliveries queued for fan-out and not fanned out yet (receipt time → key): an ordered
     * handler's run waits while a delivery received before its own is still here (order.ts).
     */
    pendingFanOut: `${prefix}:fanout:pending`,
  };
}
