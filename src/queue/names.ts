/** Queue of verified deliveries: one job per delivery, fanned out by the dispatcher. */
export const EVENTS_QUEUE = 'events';
/** Queue of handler runs: one job per (delivery, subscribed handler). */
export const HANDLERS_QUEUE = 'handlers';
export const QUEUE_NAMES = [EVENTS_QUEUE, HANDLERS_QUEUE] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

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
  };
}
