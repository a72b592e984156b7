import type { Config } from '../../config/index.js';
import type { HandlerSet } from '../../handler/index.js';
import type { Logger } from '../../log/index.js';
import { IngestStore, POLLS_QUEUE, worldAt, type WorldSource, ChangeClaims } from '../../queue/index.js';
import type { RedisClient } from '../../redis/index.js';
import { type ContextDeps, deterministicKeys } from '../../worker/index.js';
import type { Job } from 'bullmq';
import type { DerivedEventName } from '../../events/index.js';
import type { TimedSource, Timer } from '../timers.js';
import { derivedSubscriptions, pollOnce } from './poller.js';
import { kindsFor, type SnapshotKind } from './snapshot-diff.js';
import { refreshSnapshot } from './snapshot.js';

/** The poll queue's job scheduler of derived events. */
export const POLL_SCHEDULER_ID = 'poll';
/** The poll queue's job scheduler of the snapshot of event fields (src/sources/poll/snapshot.ts). */
export const SNAPSHOT_SCHEDULER_ID = 'snapshot';

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

/** The events loaded handlers subscribe to. */
const subscribed = (set: HandlerSet): string[] => set.current().all.flatMap((h) => [...h.on]);

/**
 * The poller as a timed source on queue `polls`, its jobs one at a time: one
 * job scheduler every POLL_EVERY while a loaded handler subscribes to a
 * derived event, and one every SNAPSHOT_EVERY (from start-up: the first tick
 * takes the baseline) while one subscribes to an event only the snapshot
 * recovers after lost webhooks (conversation.opened/assigned,
 * contact.lifecycle_changed, lead.won/lost). Each is removed when no handler
 * needs it.
 */
export function pollTimer(deps: PollTimerDeps): TimedSource {
  const { config, set, commands } = deps;
  const wanted = derivedSubscriptions(set.current().all);
  const kinds = config.reconcile.snapshotEveryMs === undefined ? [] : kindsFor(subscribed(set));
  const timers = pollSchedulers(config, wanted, kinds);
  const jobs: PollJobs = {
    deps,
    wanted,
    ingest: new IngestStore(commands, config.queuePrefix, config.dedupeTtlMs),
    claims: new ChangeClaims(commands, config.queuePrefix, config.dedupeTtlMs, deps.world ?? null),
    warned: false,
  };
  return {
    queue: POLLS_QUEUE,
    what: 'poll',
    timer: { noun: 'poller', removed: 'no loaded handler needs it (derived events; SNAPSHOT_EVERY events)' },
    timers,
    worker: { concurrency: 1 },
    run: timers.length === 0 ? undefined : (job) => runPollJob(jobs, job),
  };
}

/** The job schedulers wanted: the poll while a handler subscribes to a derived event, the snapshot while one needs it. */
function pollSchedulers(config: Config, wanted: ReadonlySet<DerivedEventName>, kinds: readonly SnapshotKind[]): Timer[] {
  const opts = { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } };
  return [
    ...(wanted.size === 0
      ? []
      : [
          {
            id: POLL_SCHEDULER_ID,
            repeat: { every: config.pollEveryMs },
            job: { name: POLL_SCHEDULER_ID, data: {}, opts },
            fields: { events: [...wanted] },
          },
        ]),
    ...(kinds.length === 0
      ? []
      : [
          {
            id: SNAPSHOT_SCHEDULER_ID,
            repeat: { every: config.reconcile.snapshotEveryMs as number },
            job: { name: SNAPSHOT_SCHEDULER_ID, data: {}, opts },
            fields: { snapshot: kinds },
          },
        ]),
  ];
}

/** What the poll queue's jobs share in this process. */
interface PollJobs {
  readonly deps: PollTimerDeps;
  /** The derived events subscribed to at start-up. */
  readonly wanted: ReadonlySet<DerivedEventName>;
  readonly ingest: IngestStore;
  readonly claims: ChangeClaims;
  /** Whether the missing API was logged already (once per process). */
  warned: boolean;
}

/** One job of queue `polls`: a refresh of the snapshot, or a poll of the derived events. */
async function runPollJob(p: PollJobs, job: Job): Promise<unknown> {
  const { config, set, commands, log } = p.deps;
  const factory = p.deps.api;
  if (!factory) {
    if (!p.warned)
      log.warn('the poller needs WORKSPACE_API_URL and WORKSPACE_API_TOKEN; derived events and the snapshot of event fields stay off');
    p.warned = true;
    return { ran: false };
  }
  const world = worldAt(p.deps.world ? await p.deps.world.current() : null, null);
  const prefix = config.queuePrefix;
  if (job.name === SNAPSHOT_SCHEDULER_ID) {
    const now = kindsFor(subscribed(set));
    return refreshSnapshot(
      {
        redis: commands,
        prefix,
        world,
        log,
        claims: p.claims,
        ttlMs: config.dedupeTtlMs,
        // Reads only, at priority low, like the poll.
        api: factory(deterministicKeys('poll', 'snapshot'), 'low'),
        lockMs: Math.max(120_000, 2 * (config.reconcile.snapshotEveryMs ?? 0)),
      },
      now,
    );
  }
  if (p.wanted.size === 0) return { ran: false };
  return pollOnce(
    {
      redis: commands,
      prefix,
      ingest: p.ingest,
      log,
      world,
      // Reads only, at priority low: polling yields the API budget to handler runs.
      api: () => factory(deterministicKeys('poll', 'poller'), 'low'),
      taskLookaheadMs: config.taskDueLookaheadMs,
      lockMs: Math.max(60_000, 2 * config.pollEveryMs),
    },
    derivedSubscriptions(set.current().all),
  );
}
