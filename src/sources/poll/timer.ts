import type { Config } from '../../config/config.js';
import type { HandlerSet } from '../../handler/set.js';
import type { Logger } from '../../log/logger.js';
import { IngestStore } from '../../queue/ingest.js';
import { POLLS_QUEUE } from '../../queue/names.js';
import { worldAt, type WorldSource } from '../../queue/world.js';
import type { RedisClient } from '../../redis/connection.js';
import type { ContextDeps } from '../../worker/context.js';
import { deterministicKeys } from '../../worker/idempotency.js';
import type { TimedSource } from '../timers.js';
import { derivedSubscriptions, pollOnce } from './poller.js';

/** The poll queue's one job scheduler. */
export const POLL_SCHEDULER_ID = 'poll';

export interface PollTimerDeps {
  readonly config: Config;
  readonly set: HandlerSet;
  /** The worker's command connection (poller state, the inbox). */
  readonly commands: RedisClient;
  readonly log: Logger;
  readonly api: ContextDeps['api'];
  /** The worker's world (src/queue/world.ts): the poller keeps its state and delivery keys under it. */
  readonly world?: WorldSource | undefined;
}

/**
 * The poller of derived events as a timed source on queue `polls`: one job
 * scheduler every POLL_EVERY while a loaded handler subscribes to a derived
 * event (removed when none does), its jobs one at a time.
 */
export function pollTimer(deps: PollTimerDeps): TimedSource {
  const { config, set, commands, log } = deps;
  const prefix = config.queuePrefix;
  const wanted = derivedSubscriptions(set.current().all);
  const ingest = new IngestStore(commands, prefix, config.dedupeTtlMs);
  const factory = deps.api;
  let warned = false;
  return {
    queue: POLLS_QUEUE,
    what: 'poll',
    timer: { noun: 'poller', removed: 'no loaded handler subscribes to a derived event' },
    timers: wanted.size === 0 ? [] : [{
      id: POLL_SCHEDULER_ID,
      repeat: { every: config.pollEveryMs },
      job: { name: POLL_SCHEDULER_ID, data: {}, opts: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } },
      fields: { events: [...wanted] },
    }],
    worker: { concurrency: 1 },
    run: wanted.size === 0 ? undefined : async () => {
      if (!factory) {
        if (!warned) log.warn('the poller needs WORKSPACE_API_URL and WORKSPACE_API_TOKEN; derived events stay off');
        warned = true;
        return { ran: false };
      }
      return pollOnce({
        redis: commands, prefix, ingest, log, world: worldAt(deps.world ? await deps.world.current() : null, null),
        // Reads only, at priority low: polling yields the API budget to handler runs.
        api: () => factory(deterministicKeys('poll', 'poller'), 'low'),
        taskLookaheadMs: config.taskDueLookaheadMs,
        lockMs: Math.max(60_000, 2 * config.pollEveryMs),
      }, derivedSubscriptions(set.current().all));
    },
  };
}
