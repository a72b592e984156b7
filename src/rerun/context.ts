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
 * The window of runs a batch keeps in the queue: the calls the re-runs may make in 5 s (so the budget's
 * window never waits for a run to be added; runs that make no call are fed as fast as they end), at least
 * 16, at most 200. Small, so a cancel has little to remove and the low queue's slots stay free for others.
 */
export const feedWindow = (callsPer10s: number): number => Math.min(200, Math.max(16, Math.ceil(callsPer10s / 2)));
