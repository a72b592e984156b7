import type { WorkerOptions } from 'bullmq';
import type { Config } from '../config/index.js';
import { type HandlerSet, runsIn } from '../handler/index.js';
import type { Logger } from '../log/index.js';
import type { WorldSource } from '../queue/index.js';
import type { RedisClient } from '../redis/index.js';
import { type ContextDeps, RedisStepStore, runWorkspace, stepResultsTtlMs } from '../worker/index.js';
import type { LifecycleBus } from '../lifecycle/index.js';
import { pollTimer } from './poll/poll-timer.js';
import { reconcileTimer } from './reconcile/reconcile-timer.js';
import { scheduleTimers } from './schedule/schedule-timers.js';
import { checkSchedulesFor } from './schedule/workspaces.js';
import { startTimers, type Timers } from './timers.js';

export interface SourcesOptions {
  config: Config;
  redisUrl: string;
  log: Logger;
  set: HandlerSet;
  /** The worker's command connection (locks, poller state, steps, claims). */
  commands: RedisClient;
  /** The worker's API client factory (src/runtime/worker-api.ts): schedule runs and polls. Reconcile builds its own on the same builder. */
  api: ContextDeps['api'];
  /** The worker process's BullMQ worker options (concurrency, locks, stalled checks). */
  workerOptions: Partial<WorkerOptions>;
  /** The worker's lifecycle stream: each schedule run's attempts, their steps and API calls (history, metrics, tracing). */
  lifecycle?: LifecycleBus | undefined;
  /** The worker's world (src/queue/world.ts): poller state, claims and derived or reconciled keys are kept under it. */
  world?: WorldSource | undefined;
}

/**
 * Every timed source of a worker process through the one timer wiring
 * (src/sources/timers.ts): the poller of derived events (while a loaded handler
 * subscribes to one), the schedules, and scheduled reconcile (RECONCILE_EVERY).
 */
export async function startSources(opts: SourcesOptions): Promise<Timers> {
  const { config, log, set, commands, lifecycle } = opts;
  const { schedules } = set.current();
  checkSchedulesFor(config, schedules);
  const here = schedules.filter((s) => runsIn(s, config.workspaceId));
  const steps = new RedisStepStore(
    commands,
    config.queuePrefix,
    stepResultsTtlMs({ dedupeTtlMs: config.dedupeTtlMs, historyTtlMs: config.history.ttlMs }),
  );
  const timers = await startTimers({
    redisUrl: opts.redisUrl,
    commands,
    prefix: config.queuePrefix,
    log,
    workerOptions: opts.workerOptions,
    sources: [
      pollTimer({ config, set, commands, log, api: opts.api, world: opts.world }),
      scheduleTimers({ set, api: opts.api, steps, log, lifecycle, workspace: runWorkspace(config.workspaceId) }),
      reconcileTimer({ config, commands, log, world: opts.world }),
    ],
  });
  if (here.length) log.info({ schedules: here.map((s) => s.id) }, 'schedules started');
  return timers;
}
