import type { HandlerJobData } from './jobs.js';

/** What an ordered handler says of its dead runs (its `onDead` option, src/handler/run-policy.ts). */
export type OnDead = 'release' | 'block';

/** The part of a handler the dead-run decision reads (a Handler has it). */
export interface DeadPolicy {
  readonly flow: { readonly onDead: OnDead };
}

/**
 * What a run dead for good does to its key's line: `release` it (the next run
 * starts), `hold` it (`onDead: 'block'`: later runs wait until the dead run is
 * retried or purged), or `none` (not an ordered run). The one place this is
 * decided, whoever saw the run die (the processor, or BullMQ for a run that
 * stalled too often). A handler no longer known (its module removed) releases:
 * nothing would ever retry its run in its place.
 */
export function deadRunAction(data: Pick<HandlerJobData, 'order'>, handler: DeadPolicy | undefined): 'release' | 'hold' | 'none' {
  if (!data.order) return 'none';
  return handler?.flow.onDead === 'block' ? 'hold' : 'release';
}
