import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job, type Queue } from 'bullmq';
import { createApiClient, type ApiClient } from '../api/client.js';
import type { IdempotencyKeyGenerator } from '../api/idempotency.js';
import { createRedisRateLimiter } from '../api/rate-limiter-redis.js';
import type { Config } from '../config.js';
import type { Handler } from '../handler.js';
import type { Logger } from '../log.js';
import type { StoredDelivery } from '../queue/delivery.js';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from '../queue/names.js';
import { closeRedis, createRedisConnection } from '../redis/connection.js';
import { dispatch } from './dispatcher.js';
import type { HandlerJobData } from '../queue/jobs.js';
import { pauseHandlers, pauseState, resumeHandlers, tokenHash } from '../queue/pause.js';
import { ReadCache } from './read-cache.js';
import type { WorkerHooks } from './hooks.js';
import { runHandler } from './runner.js';
import { readHandlerSettings } from './settings.js';
import { RedisStepStore } from './steps.js';
import type { RedisClient } from '../redis/connection.js';

export interface WorkerServiceOptions {
  config: Config;
  redisUrl: string;
  log: Logger;
  /** Every handler module: fan-out creates a job for each subscriber, whoever runs it. */
  handlers: readonly Handler[];
  /** Ids this process runs (HANDLERS); default every handler. Other processes run the rest. */
  run?: readonly string[];
  /** Environment the handlers' settings are parsed from (Switchyard's own secrets are never read). */
  env: Readonly<Record<string, string | undefined>>;
  hooks?: WorkerHooks;
  /** Overrides the API client factory (tests). */
  fetch?: typeof fetch;
}

export interface WorkerService {
  readonly name: 'worker';
  readonly events: Worker;
  readonly handlers: Worker;
  close(graceMs: number): Promise<void>;
}

/**
 * Two BullMQ workers on the shared Redis: `events` (validate and fan out) and
 * `handlers` (run one handler). Many processes may run this at once; BullMQ's
 * locks give each job to one of them at a time.
 */
export async function startWorker(opts: WorkerServiceOptions, queues: { handlers: Queue }): Promise<WorkerService> {
  const { config, log, handlers } = opts;
  const prefix = config.queuePrefix;
  const runs = (h: Handler) => !opts.run || opts.run.includes(h.id);
  const byId = new Map(handlers.filter(runs).map((h) => [h.id, h]));
  // Before Redis is touched: a bad setting stops start-up naming the handler and the variable.
  const settings = readHandlerSettings([...byId.values()], opts.env);
  const commands = createRedisConnection(opts.redisUrl, 'worker', 'switchyard-worker');
  commands.on('error', (err: Error) => log.debug({ err: err.message }, 'worker redis connection error'));
  const steps = new RedisStepStore(commands, prefix, Math.max(config.dedupeTtlMs, 7 * 86_400_000) + 86_400_000);
  const unclaimedWarned = new Set<string>();
  const apiFactory = makeApiFactory(opts, commands);
  const currentToken = tokenHash(config.workspaceApiToken);

  await resumeIfTokenChanged(commands, queues.handlers, prefix, currentToken, log);

  const eventsWorker = new Worker<StoredDelivery>(
    EVENTS_QUEUE,
    async (job) => dispatch(job.data, handlers, queues.handlers),
    { connection: createRedisConnection(opts.redisUrl, 'worker', 'switchyard-events'), prefix, ...workerOptions(config) },
  );

  const handlersWorker = new Worker<HandlerJobData>(
    HANDLERS_QUEUE,
    async (job: Job<HandlerJobData>, token?: string, signal?: AbortSignal) => {
      const handler = byId.get(job.data.handlerId);
      if (!handler) {
        // Run by another process (HANDLERS narrows this one): put it back for a worker that has it,
        // and dead-letter it with the reason once nobody has claimed it for UNCLAIMED_MS.
        if (Date.now() - job.timestamp > UNCLAIMED_MS) {
          throw new UnrecoverableError(`no worker runs handler "${job.data.handlerId}" (narrowed out by HANDLERS everywhere, or its module was removed)`);
        }
        if (!unclaimedWarned.has(job.data.handlerId)) {
          unclaimedWarned.add(job.data.handlerId);
          log.warn({ handler: job.data.handlerId }, 'a job for a handler this process does not run; leaving it to a worker that does');
        }
        // Short at first and jittered (pools running different subsets hand such jobs back and forth until the
        // right one takes it), growing with the job's age to at most 5 s so an unclaimed job does not churn Redis.
        const age = Date.now() - job.timestamp;
        await job.moveToDelayed(Date.now() + Math.min(5_000, 100 + age / 20) + Math.floor(Math.random() * 200), token);
        throw new DelayedError();
      }
      const outcome = await runHandler(handler, job.data, {
        api: apiFactory,
        steps,
        log,
        settings: settings.get(handler.id) ?? {},
        signal: signal ?? new AbortController().signal,
        delivery: { key: job.data.key, receivedAt: job.data.receivedAt, attempt: job.attemptsMade + 1 },
      });
      opts.hooks?.onHandler?.({ handler: handler.id, event: job.data.event.name, outcome: outcome.ok ? 'completed' : outcome.verdict.kind, ms: outcome.ms });
      if (outcome.ok) return { ms: Math.round(outcome.ms) };
      const { verdict } = outcome;
      switch (verdict.kind) {
        case 'dead':
          throw new UnrecoverableError(verdict.reason);
        case 'delay':
          // 429 and quota: wait without spending an attempt (the shared limiter decides when).
          await job.moveToDelayed(Date.now() + verdict.ms, token);
          throw new DelayedError();
        case 'pause': {
          const first = await pauseHandlers(commands, queues.handlers, prefix, { reason: verdict.reason, code: verdict.code, at: new Date().toISOString(), tokenHash: currentToken });
          if (first) log.error({ reason: verdict.reason }, 'handlers queue paused: every job is kept until it is resumed');
          opts.hooks?.onPause?.(verdict.reason);
          await job.moveToWait(token);
          throw new WaitingError();
        }
        case 'retry':
          throw outcome.error instanceof Error ? outcome.error : new Error(verdict.reason);
      }
    },
    { connection: createRedisConnection(opts.redisUrl, 'worker', 'switchyard-handlers'), prefix, ...workerOptions(config) },
  );

  for (const w of [eventsWorker, handlersWorker]) {
    w.on('error', (err) => log.warn({ err: err.message, queue: w.name }, 'worker error'));
    w.on('failed', (job, err) => {
      if (job && (err instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1))) {
        log.error({ queue: w.name, job: job.id, reason: err.message }, 'dead-lettered');
      }
    });
  }
  log.info({ handlers: [...byId.keys()], concurrency: config.workerConcurrency }, 'worker started');

  return {
    name: 'worker',
    events: eventsWorker,
    handlers: handlersWorker,
    close: async () => {
      // Worker.close() waits for active jobs to finish; the caller bounds the wait.
      await Promise.allSettled([eventsWorker.close(), handlersWorker.close()]);
      await closeRedis(commands);
    },
  };
}

/** Per-request timeout of the handlers' API client (also the longest a call's rate-limit slot counts as in flight). */
const API_TIMEOUT_MS = 30_000;

/** How long a handler job may wait for a worker that runs its handler before it is dead-lettered. */
const UNCLAIMED_MS = 60 * 60_000;

/**
 * A crashed worker's active job counts as stalled once its lock lapses, then runs again.
 * BullMQ moves a job back only when one stalled check marked it (no lock renewal since)
 * and a later check finds its lock gone, and a check is skipped while the previous one's
 * `stalled-check` key (which lives exactly one interval) is still there: the restarted
 * worker's first tick meets the dead worker's key, and about every other tick meets its
 * own (measured: ~1 in 2 at 200 ms, 1 in 6 at 2 s). Performed checks are therefore up to
 * two intervals apart. With the interval equal to the lock (30 s) and a restart 6 s after
 * the kill, an orphaned job ran again 66 s or 96 s after it; a quarter of the lock keeps it
 * within {@link orphanRecoveryBoundMs}.
 */
export function stalledIntervalMs(lockMs: number): number {
  return Math.max(1, Math.floor(lockMs / 4));
}

/**
 * Longest an orphaned job (its worker killed) waits before it runs again, for a worker
 * restarted (or still running elsewhere) within a lock duration: the dead worker's lock
 * lapses within `lockMs` of its last renewal, and a performed stalled check follows within
 * two intervals. 45 s for the default 30 s lock.
 */
export function orphanRecoveryBoundMs(lockMs: number): number {
  return lockMs + 2 * stalledIntervalMs(lockMs);
}

function workerOptions(config: Config) {
  return {
    concurrency: config.workerConcurrency,
    lockDuration: config.jobLockMs,
    stalledInterval: stalledIntervalMs(config.jobLockMs),
    maxStalledCount: 5,
  };
}

async function resumeIfTokenChanged(redis: RedisClient, queue: Queue, prefix: string, current: string | null, log: Logger): Promise<void> {
  const paused = await pauseState(redis, prefix);
  if (paused && paused.tokenHash !== current && current !== null) {
    await resumeHandlers(redis, queue, prefix);
    log.warn({ was: paused.code }, 'handlers queue was paused for an unusable API token; a different token is configured now, resuming');
  } else if (paused) {
    log.error({ reason: paused.reason, since: paused.at }, 'handlers queue is paused; replace the API token and restart, or run `switchyard dlq resume`');
  }
}

function makeApiFactory(opts: WorkerServiceOptions, redis: RedisClient): ((keys: IdempotencyKeyGenerator) => ApiClient) | undefined {
  const { config } = opts;
  if (!config.workspaceApiUrl || !config.workspaceApiToken) {
    opts.log.warn('WORKSPACE_API_URL / WORKSPACE_API_TOKEN unset: handlers that call the API will be dead-lettered with that reason');
    return undefined;
  }
  const { workspaceApiUrl: baseUrl, workspaceApiToken: token, workspaceApiBurst: burst, queuePrefix } = config;
  // One limiter and one read cache per process, shared by every handler run. A call's
  // slot counts as in flight for at most the request timeout: a killed process never marks
  // its calls done, so when they filled the window, the limiter's 60 s default kept every
  // worker waiting 70 s after the kill.
  const rateLimiter = createRedisRateLimiter({ redis, token, burst, prefix: `${queuePrefix}:api-rate:`, inflightMs: API_TIMEOUT_MS });
  const cache = new ReadCache();
  return (keys) =>
    cache.wrap(createApiClient({
      baseUrl, token, burst, rateLimiter, idempotencyKey: keys, timeoutMs: API_TIMEOUT_MS,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
      ...(opts.hooks?.onApiCall ? { onCall: opts.hooks.onApiCall } : {}),
      logger: opts.log,
    }));
}
