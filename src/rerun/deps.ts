import type { Handler } from '../handler/index.js';
import type { RedisClient } from '../redis/index.js';
import type { BodyReader } from './bodies.js';

/** What the rerun engine needs: the Redis of the receiver and workers, the project's handlers, the re-runs' budget. */
export interface RerunDeps {
  readonly redis: RedisClient;
  /** QUEUE_PREFIX. */
  readonly prefix: string;
  /** The project's handlers, as loaded (`switchyard handlers`): the one named must be among them. */
  readonly handlers: readonly Handler[];
  /** The re-runs' share of the API budget: RERUN_SHARE of WORKSPACE_API_BURST (calls per 10 s). */
  readonly budget: RerunBudget;
  /** The kept bodies (default: the `events` jobs still in Redis). */
  readonly bodies?: BodyReader | undefined;
  /** Who starts or cancels (kept with the batch): `cli:<user>`, `admin:<user>`. */
  readonly by?: string;
  readonly now?: () => number;
}

/** Calls per 10 s the runs of rerun batches may make, and what that is a share of. */
export interface RerunBudget {
  /** WORKSPACE_API_BURST. */
  readonly burst: number;
  /** RERUN_SHARE. */
  readonly share: number;
  /** rerunBurst(): the share of the burst, at least 1. */
  readonly callsPer10s: number;
}
