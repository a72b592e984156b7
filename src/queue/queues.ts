import { Queue } from 'bullmq';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from './names.js';
import type { RedisClient } from '../redis/connection.js';

export interface Queues {
  readonly events: Queue;
  readonly handlers: Queue;
  close(): Promise<void>;
}

/** The two BullMQ queues on one connection, under the configured prefix. */
export function openQueues(connection: RedisClient, prefix: string): Queues {
  const events = new Queue(EVENTS_QUEUE, { connection, prefix });
  const handlers = new Queue(HANDLERS_QUEUE, { connection, prefix });
  // Connection errors surface where commands fail (pump, workers) and are logged there.
  for (const q of [events, handlers]) q.on('error', () => undefined);
  return {
    events,
    handlers,
    close: async () => {
      await Promise.allSettled([events.close(), handlers.close()]);
    },
  };
}
