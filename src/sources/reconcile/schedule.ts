import { Queue, Worker } from 'bullmq';
import type { Config } from '../../config/config.js';
import type { Logger } from '../../log/logger.js';
import { ChangeClaims } from '../../queue/change.js';
import { IngestStore } from '../../queue/ingest.js';
import { RECONCILE_QUEUE } from '../../queue/names.js';
import { worldAt, type WorldSource } from '../../queue/world.js';
import { closeRedis, createRedisConnection, type RedisClient } from '../../redis/connection.js';
import { reconcileClient } from './client.js';
import { reconcile, type ReconcileReport } from './run.js';

const SCHEDULER_ID = 'reconcile-every';
/** A scheduled window ends this long before the tick (at most RECONCILE_EVERY), so webhooks in flight arrive first. */
const SETTLE_MS = 60_000;

export interface ReconcileSchedule {
  close(): Promise<void>;
}

/**
 * Scheduled reconcile in a worker process. With RECONCILE_EVERY set, upserts
 * one BullMQ job scheduler (every worker upserts the same one, so a tick makes
 * one job) and runs its jobs one at a time: reconcile over RECONCILE_WINDOW
 * ending a minute (at most RECONCILE_EVERY) before the tick, its report logged. Unset, removes the scheduler so turning
 * it off takes effect, and returns null.
 */
export async function startReconcileSchedule(
  opts: { config: Config; redisUrl: string; log: Logger },
  commands: RedisClient,
  /** The workers' world (src/queue/world.ts): claims and reconciled keys are kept under it. */
  world: WorldSource | null = null,
): Promise<ReconcileSchedule | null> {
  const { config, log } = opts;
  const prefix = config.queuePrefix;
  const queue = new Queue(RECONCILE_QUEUE, { connection: commands, prefix });
  const everyMs = config.reconcile.everyMs;
  if (everyMs === undefined) {
    await queue.removeJobScheduler(SCHEDULER_ID).catch(() => false);
    await queue.close();
    return null;
  }
  if (config.reconcile.windowMs >= config.dedupeTtlMs) {
    log.error({ windowMs: config.reconcile.windowMs, dedupeTtlMs: config.dedupeTtlMs }, 'RECONCILE_WINDOW must be shorter than DEDUPE_TTL (changes received before it are forgotten and would run again): no scheduled reconcile');
    await queue.removeJobScheduler(SCHEDULER_ID).catch(() => false);
    await queue.close();
    return null;
  }
  let calls = 0;
  const api = reconcileClient(config, commands, () => { calls++; });
  if (!api) {
    log.warn('RECONCILE_EVERY is set but WORKSPACE_API_URL / WORKSPACE_API_TOKEN are not: no scheduled reconcile');
    await queue.close();
    return null;
  }
  await queue.upsertJobScheduler(SCHEDULER_ID, { every: everyMs }, { name: 'reconcile', opts: { removeOnComplete: 20, removeOnFail: 20, attempts: 1 } });
  const ingest = new IngestStore(commands, prefix, config.dedupeTtlMs);
  const claims = new ChangeClaims(commands, prefix, config.dedupeTtlMs, world);
  const connection = createRedisConnection(opts.redisUrl, 'worker', 'switchyard-reconcile');
  const worker = new Worker<unknown, ReconcileReport>(RECONCILE_QUEUE, async () => {
    // Changes of the last moments may still be on their way as webhooks: leave them to the next tick.
    const until = Date.now() - Math.min(SETTLE_MS, everyMs);
    const report = await reconcile({ api, claims, world: worldAt(world ? await world.current() : null, null), sink: ingest, window: { since: until - config.reconcile.windowMs, until }, apiCalls: () => calls });
    log.info({ reconcile: report }, `scheduled reconcile: ${report.totals.found} changes found, ${report.totals.received} already received, ${report.totals.enqueued} enqueued`);
    return report;
  }, { connection, prefix, concurrency: 1, lockDuration: 60_000 });
  worker.on('error', (err) => log.warn({ err: err.message }, 'reconcile worker error'));
  worker.on('failed', (_job, err) => log.error({ err: err.message }, 'scheduled reconcile failed'));
  log.info({ everyMs, windowMs: config.reconcile.windowMs, budget: config.reconcile.budget }, 'scheduled reconcile on');
  return {
    close: async () => {
      await worker.close();
      await queue.close();
      await closeRedis(connection);
    },
  };
}
