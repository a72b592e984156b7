import type { Config } from '../../config/index.js';
import type { Logger } from '../../log/index.js';
import { ChangeClaims, IngestStore, RECONCILE_QUEUE, worldAt, type WorldSource } from '../../queue/index.js';
import type { RedisClient } from '../../redis/index.js';
import type { TimedSource } from '../timers.js';
import { reconcileClient } from './client.js';
import { reconcile } from './run.js';
import { snapshotSource } from '../poll/snapshot.js';

/** The reconcile queue's one job scheduler. */
export const RECONCILE_SCHEDULER_ID = 'reconcile-every';
/** A scheduled window ends this long before the tick (at most RECONCILE_EVERY), so webhooks in flight arrive first. */
const SETTLE_MS = 60_000;

export interface ReconcileTimerDeps {
  readonly config: Config;
  /** The worker's command connection (claims, the inbox, the shared limits). */
  readonly commands: RedisClient;
  readonly log: Logger;
  /** The workers' world (src/queue/world.ts): claims and reconciled keys are kept under it. */
  readonly world?: WorldSource | null | undefined;
}

/**
 * Scheduled reconcile as a timed source on queue `reconcile`. With
 * RECONCILE_EVERY set, one job scheduler, its jobs one at a time: reconcile
 * over RECONCILE_WINDOW ending a minute (at most RECONCILE_EVERY) before the
 * tick, its report logged. Unset, or with a window not shorter than
 * DEDUPE_TTL, the scheduler is removed, so turning it off takes effect.
 * Without an API this process runs none and leaves the scheduler alone.
 */
export function reconcileTimer(deps: ReconcileTimerDeps): TimedSource {
  const { config, commands, log } = deps;
  const base = {
    queue: RECONCILE_QUEUE,
    what: 'scheduled reconcile',
    timer: { noun: 'reconcile', removed: 'RECONCILE_EVERY is off' },
  } as const;
  const everyMs = config.reconcile.everyMs;
  if (everyMs === undefined) return { ...base, timers: [] };
  if (config.reconcile.windowMs >= config.dedupeTtlMs) {
    const windowTooLong =
      'RECONCILE_WINDOW must be shorter than DEDUPE_TTL (changes received before it are forgotten and would run again): ' +
      'no scheduled reconcile';
    log.error({ windowMs: config.reconcile.windowMs, dedupeTtlMs: config.dedupeTtlMs }, windowTooLong);
    return { ...base, timers: [] };
  }
  let calls = 0;
  const api = reconcileClient(config, commands, () => {
    calls++;
  });
  if (!api) {
    log.warn('RECONCILE_EVERY is set but WORKSPACE_API_URL / WORKSPACE_API_TOKEN are not: no scheduled reconcile');
    return { ...base, timers: null };
  }
  const prefix = config.queuePrefix;
  const ingest = new IngestStore(commands, prefix, config.dedupeTtlMs);
  const claims = new ChangeClaims(commands, prefix, config.dedupeTtlMs, deps.world ?? null);
  log.info({ everyMs, windowMs: config.reconcile.windowMs, budget: config.reconcile.budget }, 'scheduled reconcile on');
  return {
    ...base,
    timers: [
      {
        id: RECONCILE_SCHEDULER_ID,
        repeat: { every: everyMs },
        job: { name: 'reconcile', data: {}, opts: { attempts: 1, removeOnComplete: 20, removeOnFail: 20 } },
      },
    ],
    worker: { concurrency: 1, lockDuration: 60_000 },
    failed: (err) => log.error({ err: err.message }, 'scheduled reconcile failed'),
    run: async () => {
      // Changes of the last moments may still be on their way as webhooks: leave them to the next tick.
      const until = Date.now() - Math.min(SETTLE_MS, everyMs);
      const world = worldAt(deps.world ? await deps.world.current() : null, null);
      const snapshot = snapshotSource({ redis: commands, prefix, world, api, log, claims, ttlMs: config.dedupeTtlMs, lockMs: 120_000 });
      const report = await reconcile({
        api,
        claims,
        snapshot,
        world,
        sink: ingest,
        window: { since: until - config.reconcile.windowMs, until },
        apiCalls: () => calls,
      });
      const { found, received, enqueued } = report.totals;
      log.info({ reconcile: report }, `scheduled reconcile: ${found} changes found, ${received} already received, ${enqueued} enqueued`);
      return report;
    },
  };
}
