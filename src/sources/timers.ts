import { Queue, Worker, type Job, type JobSchedulerJson, type WorkerOptions } from 'bullmq';
import type { Logger } from '../log/index.js';
import { closeRedis, createRedisConnection, ownedConnections, type RedisClient } from '../redis/index.js';

/** When a timer ticks: a fixed interval, or a cron pattern in a time zone (BullMQ's repeat options). */
export type Repeat = { every: number } | { pattern: string; tz?: string };

/** One BullMQ job scheduler a timed source wants: each tick adds one job, once across every process. */
export interface Timer {
  readonly id: string;
  readonly repeat: Repeat;
  /** The job a tick adds. */
  readonly job: {
    readonly name: string;
    readonly data: Record<string, unknown>;
    readonly opts: {
      readonly attempts: number;
      readonly backoff?: { readonly type: string; readonly delay: number };
      readonly removeOnComplete: number | { count: number };
      readonly removeOnFail: boolean | number | { count: number };
    };
  };
  /** Logged with it when it is added or changed. */
  readonly fields?: Record<string, unknown>;
}

/** Runs one job of a timed source (the BullMQ worker's processor). */
export type TimerRun = (job: Job, token: string | undefined, signal: AbortSignal | undefined) => Promise<unknown>;

/**
 * A source of timed work (polls, schedules, reconcile): its queue, the job
 * schedulers it wants there and how a job of it runs in this process.
 */
export interface TimedSource {
  readonly queue: string;
  /** What one job is called in the log: `poll`, `schedule run`, `scheduled reconcile`. */
  readonly what: string;
  /** What one scheduler is called in the log (`poller`, `schedule`, `reconcile`) and why one is removed. */
  readonly timer: { readonly noun: string; readonly removed: string };
  /**
   * The schedulers it wants; every other scheduler of its queue is removed (its
   * module is gone, or it was turned off). Null: this process cannot tell (it lacks
   * what the source needs): the queue's schedulers are left as they are.
   */
  readonly timers: readonly Timer[] | null;
  /** How a job runs; absent, this process runs none (no worker on the queue). */
  readonly run?: TimerRun | undefined;
  /** Worker options of its own (concurrency, lock), over the process's. */
  readonly worker?: Partial<Pick<WorkerOptions, 'concurrency' | 'lockDuration'>>;
  /** Logs a failed job its own way (default: a warning `<what> failed`). */
  readonly failed?: (err: Error, job: Job | undefined) => void;
}

export interface TimersOptions {
  readonly redisUrl: string;
  /** The worker's command connection: the sync lock. */
  readonly commands: RedisClient;
  /** QUEUE_PREFIX. */
  readonly prefix: string;
  readonly log: Logger;
  /** The worker process's BullMQ worker options (concurrency, locks, stalled checks). */
  readonly workerOptions: Partial<WorkerOptions>;
  readonly sources: readonly TimedSource[];
}

export interface Timers {
  close(): Promise<void>;
}

/**
 * How long the sync lock lives. A sync is a handful of commands (milliseconds); a process killed while
 * holding it holds back the next worker's start by at most this long (the lock is not renewed).
 */
export const SYNC_LOCK_MS = 5_000;

/**
 * The one timer wiring of a worker process. Every timed source is a set of
 * BullMQ job schedulers (`upsertJobScheduler`), so every worker process may run
 * this and each tick still makes one job. Under one Redis lock, each source's
 * queue is brought in line with what it wants now: a scheduler added or changed
 * per timer, one removed per scheduler no longer wanted. Then a BullMQ worker
 * per source that runs jobs here.
 */
export async function startTimers(opts: TimersOptions): Promise<Timers> {
  const { log, prefix } = opts;
  const connection = createRedisConnection(opts.redisUrl, 'worker', 'switchyard-sources');
  connection.on('error', (err: Error) => log.debug({ err: err.message }, 'sources redis connection error'));
  const queues = opts.sources.map((s) => new Queue(s.queue, { connection, prefix }));
  for (const q of queues) q.on('error', () => undefined);
  /** The workers' own connections, closed after them. */
  const owned = ownedConnections(opts.redisUrl, 'worker');
  const workers: Worker[] = [];
  const close = async (): Promise<void> => {
    await Promise.allSettled(workers.map((w) => w.close()));
    await Promise.allSettled(queues.map((q) => q.close()));
    await owned.close();
    await closeRedis(connection);
  };
  try {
    await withLock(opts.commands, `${prefix}:sources:sync`, async () => {
      for (const [i, s] of opts.sources.entries()) if (s.timers) await syncTimers(queues[i] as Queue, s, log);
    });
    for (const s of opts.sources) {
      if (!s.run) continue;
      const w = new Worker(s.queue, s.run, {
        connection: owned.connect(`switchyard-${s.queue}`),
        prefix,
        ...opts.workerOptions,
        ...s.worker,
      });
      w.on('error', (err) => log.warn({ err: err.message, queue: s.queue }, 'worker error'));
      w.on('failed', (job, err) =>
        s.failed ? s.failed(err, job) : log.warn({ queue: s.queue, job: job?.id, err: err.message }, `${s.what} failed`),
      );
      workers.push(w);
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { close };
}

/** Adds or updates one job scheduler per timer of `source`, and removes the queue's others. */
async function syncTimers(queue: Queue, source: TimedSource, log: Logger): Promise<void> {
  const existing = await queue.getJobSchedulers(0, -1);
  const wanted = source.timers ?? [];
  for (const t of wanted) {
    const cur = existing.find((e) => e.key === t.id || e.id === t.id);
    if (cur && sameTimer(cur, t)) continue;
    await queue.upsertJobScheduler(t.id, t.repeat, { name: t.job.name, data: t.job.data, opts: { ...t.job.opts } });
    log.info({ [source.timer.noun]: t.id, ...t.repeat, ...t.fields }, `${source.timer.noun} ${cur ? 'updated' : 'added'}`);
  }
  for (const e of existing) {
    const id = e.id ?? e.key;
    if (wanted.some((t) => t.id === id)) continue;
    await queue.removeJobScheduler(id);
    log.info({ [source.timer.noun]: id }, `${source.timer.noun} removed: ${source.timer.removed}`);
  }
}

/** True when the stored scheduler already ticks as `t` and adds the same job options. */
function sameTimer(cur: JobSchedulerJson, t: Timer): boolean {
  const r = t.repeat;
  const opts = cur.template?.opts;
  const same = (a: unknown, b: unknown) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
  return (
    cur.every === ('every' in r ? r.every : undefined) &&
    cur.pattern === ('pattern' in r ? r.pattern : undefined) &&
    (cur.tz ?? undefined) === ('tz' in r ? r.tz : undefined) &&
    opts?.attempts === t.job.opts.attempts &&
    same(opts.backoff, t.job.opts.backoff) &&
    same(opts.removeOnFail, t.job.opts.removeOnFail) &&
    same(opts.removeOnComplete, t.job.opts.removeOnComplete)
  );
}

/** `v` with its object keys in order (BullMQ gives stored options back in an order of its own). */
function sorted(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, x]) => [k, sorted(x)]),
  );
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
