import type { WorkerOptions } from 'bullmq';
import type { Config } from '../config/config.js';
import type { HandlerSet } from '../handler/set.js';
import type { Logger } from '../log/logger.js';
import type { WorldSource } from '../queue/world.js';
import type { RedisClient } from '../redis/connection.js';
import type { ContextDeps } from '../worker/context.js';
import { RedisStepStore, type StepStore } from '../worker/steps.js';
import { pollTimer } from './poll/timer.js';
import { reconcileTimer } from './reconcile/timer.js';
import { scheduleTimers, type ScheduleProcess } from './schedule/timer.js';
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
  /** Delivery history (HISTORY): records each schedule run, its attempts, steps and API calls (with `api` built on its hooks). */
  history?: { schedules(inner: ScheduleProcess): ScheduleProcess; steps(store: StepStore): StepStore } | undefined;
  /** The worker's world (src/queue/world.ts): poller state, claims and derived or reconciled keys are kept under it. */
  world?: WorldSource | undefined;
}

/**
 * Every timed source of a worker process through the one timer wiring
 * (src/sources/timers.ts): the poller of derived events (while a loaded handler
 * subscribes to one), the schedules, and scheduled reconcile (RECONCILE_EVERY).
 */
export async function startSources(opts: SourcesOptions): Promise<Timers> {
  const { config, log, set, commands, history } = opts;
  const { schedules } = set.current();
  const steps = new RedisStepStore(commands, config.queuePrefix, Math.max(config.dedupeTtlMs, 7 * 86_400_000) + 86_400_000);
  const timers = await startTimers({
    redisUrl: opts.redisUrl, commands, prefix: config.queuePrefix, log, workerOptions: opts.workerOptions,
    sources: [
      pollTimer({ config, set, commands, log, api: opts.api, world: opts.world }),
      scheduleTimers({ set, api: opts.api, steps: history?.steps(steps) ?? steps, log, ...(history ? { observe: (p: ScheduleProcess) => history.schedules(p) } : {}) }),
      reconcileTimer({ config, commands, log, world: opts.world }),
    ],
  });
  if (schedules.length) log.info({ schedules: schedules.map((s) => s.id) }, 'schedules started');
  return timers;
}
