import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { worldAt, type WorldSource } from '../queue/world.js';
import type { ApiClient } from '../api/client.js';
import type { IdempotencyKeyGenerator } from '../api/idempotency.js';
import type { LimiterPriority } from '../api/rate-limiter.js';
import type { Config } from '../config/config.js';
import { repeatOptions, type Schedule } from '../handler/schedule.js';
import type { LifecycleBus } from '../lifecycle/bus.js';
import type { AttemptRef } from '../lifecycle/events.js';
import type { Logger } from '../log/logger.js';
import { IngestStore } from '../queue/ingest.js';
import { closeRedis, createRedisConnection, ownedConnections, type RedisClient } from '../redis/connection.js';
import { derivedSubscriptions, pollOnce } from '../sources/poll/poller.js';
import { POLLS_QUEUE, SCHEDULES_QUEUE } from '../queue/names.js';
import { scheduleKey, tickOf, type ScheduleJobData, type ScheduleJobView } from '../queue/jobs.js';
import { createScheduleProcessor, POLL_SCHEDULER_ID } from '../sources/schedule/processor.js';
import type { HandlerSet } from '../handler/set.js';
import { deterministicKeys } from '../worker/idempotency.js';
import { RedisStepStore } from '../worker/steps.js';
import { workerOptions } from './worker-options.js';

export interface SourcesOptions {
  config: Config;
  redisUrl: string;
  log: Logger;
  set: HandlerSet;
  /** The worker's command connection (locks, poller state, steps). */
  commands: RedisClient;
  api: ((keys: IdempotencyKeyGenerator, priority: LimiterPriority) => ApiClient) | undefined;
  /** The worker's lifecycle stream: each schedule run's attempts, their steps and API calls (history, metrics). */
  lifecycle?: LifecycleBus;
  /** The worker's world (src/queue/world.ts): the poller keeps its state and delivery keys under it. */
  world?: WorldSource;
}

export interface Sources {
  close(): Promise<void>;
}

const SYNC_LOCK_MS = 30_000;

/**
 * The timed parts of a worker process: the poller of derived events (when a
 * loaded handler subscribes to one) and the schedules. Each is a BullMQ job
 * scheduler, so every worker process may run this and each tick still runs
 * once. The schedulers are brought in line with the loaded modules under a
 * lock: one added or changed per schedule, one removed per schedule whose
 * module is gone, the poll scheduler removed when nothing subscribes.
 */
export async function startSources(opts: SourcesOptions): Promise<Sources> {
  const { config, log, set, commands } = opts;
  const prefix = config.queuePrefix;
  const { schedules, all } = set.current();
  const wanted = derivedSubscriptions(all);
  const connection = createRedisConnection(opts.redisUrl, 'worker', 'switchyard-sources');
  connection.on('error', (err: Error) => log.debug({ err: err.message }, 'sources redis connection error'));
  const scheduleQueue = new Queue<ScheduleJobData>(SCHEDULES_QUEUE, { connection, prefix });
  const pollQueue = new Queue(POLLS_QUEUE, { connection, prefix });
  for (const q of [scheduleQueue, pollQueue]) q.on('error', () => undefined);

  await withLock(commands, `${prefix}:sources:sync`, async () => {
    await syncSchedules(scheduleQueue, schedules, log);
    const current = await pollQueue.getJobScheduler(POLL_SCHEDULER_ID);
    if (wanted.size > 0 && current?.every !== config.pollEveryMs) {
      await pollQueue.upsertJobScheduler(POLL_SCHEDULER_ID, { every: config.pollEveryMs }, {
        name: POLL_SCHEDULER_ID, data: {}, opts: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
      });
      log.info({ every: config.pollEveryMs, events: [...wanted] }, 'poller scheduled');
    } else if (wanted.size === 0 && current) {
      await pollQueue.removeJobScheduler(POLL_SCHEDULER_ID);
      log.info('poller removed: no loaded handler subscribes to a derived event');
    }
  });

  const workers: Worker[] = [];
  /** The workers' own connections, closed after them. */
  const owned = ownedConnections(opts.redisUrl, 'worker');
  const connect = (name: string): RedisClient => owned.connect(name);
  if (schedules.length > 0) {
    const steps = new RedisStepStore(commands, prefix, Math.max(config.dedupeTtlMs, 7 * 86_400_000) + 86_400_000);
    const inner = createScheduleProcessor({ set, api: opts.api, steps, log });
    const bus = opts.lifecycle;
    const process = (job: ScheduleJobView, signal?: AbortSignal) =>
      (bus?.active ? bus.attempt(scheduleAttempt(job), (observe) => inner(job, signal, observe)) : inner(job, signal));
    workers.push(new Worker<ScheduleJobData>(SCHEDULES_QUEUE, async (job: Job<ScheduleJobData>, token?: string, signal?: AbortSignal) => {
      const decision = await process({
        id: String(job.id), data: job.data, timestamp: job.timestamp, delay: job.opts.delay ?? 0, attemptsMade: job.attemptsMade, attempts: job.opts.attempts ?? 1,
      }, signal);
      switch (decision.kind) {
        case 'completed': return decision.result;
        case 'dead': throw new UnrecoverableError(decision.reason);
        case 'delay':
          await job.moveToDelayed(decision.until, token);
          throw new DelayedError();
        case 'retry': throw decision.error;
        case 'pause': throw new Error(decision.reason);
      }
    }, { connection: connect('switchyard-schedules'), prefix, ...workerOptions(config) }));
  }
  if (wanted.size > 0) {
    const ingest = new IngestStore(commands, prefix, config.dedupeTtlMs);
    const factory = opts.api;
    let warned = false;
    workers.push(new Worker(POLLS_QUEUE, async () => {
      if (!factory) {
        if (!warned) log.warn('the poller needs WORKSPACE_API_URL and WORKSPACE_API_TOKEN; derived events stay off');
        warned = true;
        return { ran: false };
      }
      return pollOnce({
        redis: commands, prefix, ingest, log, world: worldAt(opts.world ? await opts.world.current() : null, null),
        // Reads only, at priority low: polling yields the API budget to handler runs.
        api: () => factory(deterministicKeys('poll', 'poller'), 'low'),
        taskLookaheadMs: config.taskDueLookaheadMs,
        lockMs: Math.max(60_000, 2 * config.pollEveryMs),
      }, derivedSubscriptions(set.current().all));
    }, { connection: connect('switchyard-polls'), prefix, ...workerOptions(config), concurrency: 1 }));
  }
  for (const w of workers) {
    w.on('error', (err) => log.warn({ err: err.message, queue: w.name }, 'worker error'));
    w.on('failed', (job, err) => log.warn({ queue: w.name, job: job?.id, err: err.message }, `${w.name === POLLS_QUEUE ? 'poll' : 'schedule run'} failed`));
  }
  if (schedules.length) log.info({ schedules: schedules.map((s) => s.id) }, 'schedules started');
  return {
    close: async () => {
      await Promise.allSettled(workers.map((w) => w.close()));
      await Promise.allSettled([scheduleQueue.close(), pollQueue.close()]);
      await owned.close();
      await closeRedis(connection);
    },
  };
}

/** A schedule's run for one tick as the lifecycle names its attempt: a delivery of its own, key `schedule:<id>:<tick ISO>`. */
function scheduleAttempt(job: ScheduleJobView): AttemptRef {
  const tick = tickOf(job);
  return {
    kind: 'schedule', queue: SCHEDULES_QUEUE, jobId: job.id, key: scheduleKey(job.data.scheduleId, tick), handler: job.data.scheduleId, event: 'schedule',
    number: job.attemptsMade + 1, attempts: job.attempts ?? 1, startedAt: Date.now(), traceparent: undefined, tick,
  };
}

/** Adds or updates one job scheduler per schedule, and removes those whose module is gone. */
async function syncSchedules(queue: Queue<ScheduleJobData>, schedules: readonly Schedule[], log: Logger): Promise<void> {
  const existing = await queue.getJobSchedulers(0, -1);
  for (const s of schedules) {
    const repeat = repeatOptions(s);
    const cur = existing.find((e) => e.key === s.id || e.id === s.id);
    const same = cur && cur.every === ('every' in repeat ? repeat.every : undefined) &&
      cur.pattern === ('pattern' in repeat ? repeat.pattern : undefined) && (cur.tz ?? undefined) === ('tz' in repeat ? repeat.tz : undefined) &&
      cur.template?.opts?.attempts === s.retry.attempts && cur.template.opts.removeOnFail === false;
    if (same) continue;
    await queue.upsertJobScheduler(s.id, repeat, {
      name: s.id,
      data: { scheduleId: s.id },
      // A run dead for good is kept, as a handler run is, until `dlq retry` or `dlq purge`.
      opts: { attempts: s.retry.attempts, backoff: { ...s.retry.backoff }, removeOnComplete: { count: 1_000 }, removeOnFail: false },
    });
    log.info({ schedule: s.id, ...repeat }, cur ? 'schedule updated' : 'schedule added');
  }
  for (const e of existing) {
    const id = e.id ?? e.key;
    if (schedules.some((s) => s.id === id)) continue;
    await queue.removeJobScheduler(id);
    log.info({ schedule: id }, 'schedule removed: no loaded module defines it any more');
  }
}

/** Runs `fn` holding a Redis lock, waiting for another process's sync to finish first. */
async function withLock(redis: RedisClient, key: string, fn: () => Promise<void>): Promise<void> {
  const token = `${process.pid}:${Math.random()}`;
  const until = Date.now() + SYNC_LOCK_MS;
  while ((await redis.set(key, token, 'PX', SYNC_LOCK_MS, 'NX')) !== 'OK') {
    if (Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  try {
    await fn();
  } finally {
    await redis.eval('if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0', 1, key, token);
  }
}
