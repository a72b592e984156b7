import { AsyncLocalStorage } from 'node:async_hooks';
import { FairPool, PRIORITIES, SlotHold, type Priority } from '../util/index.js';

/**
 * Fair share of a worker process's handler slots between workspaces (issue 35:
 * many workspaces in one deployment).
 *
 * Per priority, one pool of `slots` shared by every workspace's BullMQ worker of
 * that priority: a free slot goes round-robin to the workspaces that have a run
 * waiting (a workspace of weight w gets w grants per turn), first come first
 * served inside one workspace (src/util/fair-pool.ts). A run that waits for its
 * own workspace's API budget gives its slot up while it waits (src/clients) and
 * takes it back, first in its workspace's line, when the budget lets it call:
 * the run's slot is reachable there through {@link currentFairSlot}.
 */
export interface FairPools {
  /** Slots of each priority (WORKER_CONCURRENCY). */
  readonly slots: number;
  /** The pool of one priority. */
  pool(priority: Priority): FairPool;
}

/** The pools of one worker process: `slots` per priority. */
export function createFairPools(slots: number): FairPools {
  const pools = new Map(PRIORITIES.map((p) => [p, new FairPool(slots)] as const));
  return {
    slots,
    pool: (priority) => pools.get(priority) as FairPool,
  };
}

/** Who a run belongs to, for the pools. */
export interface FairShare {
  readonly id: string;
  readonly weight: number;
}

const running = new AsyncLocalStorage<SlotHold>();

/** The slot of the run this code is part of (undefined outside a run wrapped by {@link fairProcessor}). */
export function currentFairSlot(): SlotHold | undefined {
  return running.getStore();
}

/**
 * `processor` run only while it holds a slot of `priority`'s pool on behalf of
 * `workspace`; the slot goes back exactly once however the run ends (result,
 * throw, or a retake left waiting when it ended).
 */
export function fairProcessor<A extends unknown[], R>(
  pools: FairPools,
  priority: Priority,
  workspace: FairShare,
  processor: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  const pool = pools.pool(priority);
  const owner = { id: workspace.id, weight: workspace.weight };
  return async (...args: A): Promise<R> => {
    const hold = new SlotHold(pool, owner, await pool.acquire(owner));
    try {
      return await running.run(hold, () => processor(...args));
    } finally {
      hold.close();
    }
  };
}
