import type { Queue } from 'bullmq';
import type { Handler } from '../handler/index.js';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/index.js';
import type { BodyReader } from './bodies.js';

/** What feeding and tracking a batch use: Redis, the `handlers-low` queue, the handlers and the kept bodies. */
export interface FeedContext {
  readonly redis: RedisClient;
  readonly prefix: string;
  /** The `handlers-low` queue: re-runs are low priority. */
  readonly queue: Queue;
  /** The handlers loaded now (a worker's current set). */
  readonly handlers: () => readonly Handler[];
  readonly bodies: BodyReader;
  /** Most runs of one batch in the queue at once (added, not ended). */
  readonly window: number;
  readonly log?: Logger | undefined;
  readonly now?: () => number;
}

/**
 * The window of runs a batch keeps in the queue: twice the calls the re-runs may make per 10 s (so the
 * budget's window never waits for a run to be added), at least 8, at most 200.
 */
export const feedWindow = (callsPer10s: number): number => Math.min(200, Math.max(8, 2 * callsPer10s));
