import type { Priority } from '../util/index.js';

/**
 * Fair share of a worker process's handler slots between workspaces (issue: many
 * workspaces in one deployment). CONTRACT STUB: the fair helper replaces the
 * bodies; the signatures are what the runtime wires.
 *
 * Per priority, one pool of `slots` shared by every workspace's BullMQ worker of
 * that priority: a free slot goes round-robin to the workspaces that have a run
 * waiting (a workspace of weight w gets w grants per turn), first come first
 * served inside one workspace. A run that waits for its own workspace's API budget
 * gives its slot up while it waits (src/clients) and takes it back, first in its
 * workspace's line, when the budget lets it call.
 */
export interface FairPools {
  /** Slots of each priority (WORKER_CONCURRENCY). */
  readonly slots: number;
}

/** The pools of one worker process: `slots` per priority. */
export function createFairPools(slots: number): FairPools {
  return { slots };
}

/** Who a run belongs to, for the pools. */
export interface FairShare {
  readonly id: string;
  readonly weight: number;
}

/** `processor` run only while it holds a slot of `priority`'s pool on behalf of `workspace` (STUB: passes through). */
export function fairProcessor<A extends unknown[], R>(
  pools: FairPools,
  priority: Priority,
  workspace: FairShare,
  processor: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  void pools;
  void priority;
  void workspace;
  return processor;
}
