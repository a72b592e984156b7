import type { Hono } from 'hono';
import { workspaceConfigs, type Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { redisWarnings, closeRedis, createRedisConnection, type RedisClient, maskRedisUrl } from '../redis/index.js';
import { mountAdmin } from '../admin/index.js';
import { runNoteWriter } from '../history/index.js';
import { createMetrics, createMetricsApp, type Metrics, type WorkspaceSource } from '../metrics/index.js';
import { listen, type RunningServer } from './http.js';
import { resolveRedis, type ResolvedRedis } from './redis.js';
import { firstAttempt, watchRedis, whenReady, type RedisWatch } from './redis-watch.js';
import { startTracing, type Tracing } from '../telemetry/index.js';
import { startReceiver, type ReceiverService, type ReceiverServiceOptions } from './receiver.js';
import type { StartWorkerPart } from './worker.js';
import { rerunBurst } from '../clients/index.js';
import { createFairPools, type FairPools } from '../worker/index.js';
import { openWorkspaces, type ServedWorkspace } from './workspaces.js';

/** A running piece of the service that can be stopped (the worker plugs in here). */
export interface Part {
  readonly name: string;
  close(graceMs: number): Promise<void>;
}

export interface ServiceOptions {
  config: Config;
  log: Logger;
  receiver: boolean;
  /** Starts the worker side on the shared Redis (see prepareWorker); returns the part to stop. */
  worker?: StartWorkerPart;
  receiverOptions?: Partial<Pick<ReceiverServiceOptions, 'extend'>>;
  /** The command this process runs (`start`, `dev`, `work`), named in its state directory's lock. */
  command?: string;
}

export interface RunningService {
  readonly redisUrl: string;
  readonly receiver: ReceiverService | undefined;
  /** The workspaces served (one, `default`, in a deployment of one), each with its queues and ingest pump. */
  readonly workspaces: readonly ServedWorkspace[];
  readonly metrics: Metrics;
  /** The `/metrics` server of a worker-only process (METRICS_PORT). */
  readonly metricsServer: RunningServer | undefined;
  /** Settles when a part started in the background (the worker, once Redis answered) could not start. */
  readonly failed: Promise<Error>;
  /** Ordered, time-bounded shutdown: HTTP first (in-flight requests finish), then pump, worker, Redis. */
  close(): Promise<void>;
}

/**
 * Wires one process: Redis (external or managed), the ingest pump, and the
 * receiver and/or worker. Many such processes on one Redis behave as one.
 */
export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const { config, log } = opts;
  const redis = await resolveRedis(config, log, opts.command);
  // Before the receiver and worker are built: they install their span wrappers only when tracing is on.
  // A failure here still stops the managed Redis (and lets go of the state directory).
  const tracing = await startTracing(config.tracing, log).catch(async (err: unknown) => {
    await redis.managed?.stop();
    throw err;
  });
  const commands = createRedisConnection(redis.url, 'worker', 'switchyard-pump');
  // An unreachable Redis is said at `warn` (with back-off), never a silent hang: the
  // receiver listens at once and the worker starts when Redis answers.
  const watch = watchRedis(commands, { url: redis.url, log });
  const attempt = firstAttempt(commands);
  const stopping = new AbortController();
  if (!redis.managed) warnOfRedisSettings(commands, stopping.signal, log);
  // Each process serves its own metrics; queue depth and pause state are read from Redis on scrape.
  const first = workspaceConfigs(config)[0] as Config;
  const metrics = createMetrics({ prefix: first.queuePrefix, workspace: first.workspaceId, redis: commands });
  // Per workspace: its queues, ingest stream and pump (INGEST_PUMP: by default where a worker runs).
  const spaces = openWorkspaces(config, {
    log,
    redisUrl: redis.url,
    commands,
    metrics,
    receiver: opts.receiver,
    withWorker: opts.worker !== undefined,
  });
  metrics.bind({ workspaces: spaces.map((s) => metricSource(s, opts.worker !== undefined)) });
  // One pool of WORKER_CONCURRENCY handler slots per priority, shared fairly by every workspace's workers.
  const pools = createFairPools(config.workerConcurrency);

  const built: Built = { config, log, redis, tracing, commands, watch, stopping, spaces, pools, parts: [] };
  let failure: ((err: Error) => void) | undefined;
  const failed = new Promise<Error>((res) => {
    failure = res;
  });
  const startWorker = () => startWorkerPart(opts, built, metrics);
  let receiver: ReceiverService | undefined;
  let metricsServer: RunningServer | undefined;
  let workerStarting: Promise<void> | undefined;
  try {
    if ((await attempt) === 'ready') await startWorker();
    else {
      log.warn(
        { redis: maskRedisUrl(redis.url) },
        opts.worker
          ? 'Redis is not reachable yet: the worker starts when it answers'
          : 'Redis is not reachable yet: deliveries are spooled (SPOOL_DIR) or answered 503 until it answers',
      );
      workerStarting = startWorker().catch((err: unknown) => {
        if (stopping.signal.aborted) return;
        failure?.(err instanceof Error ? err : new Error(String(err)));
      });
    }
    if (opts.receiver) receiver = await startReceiverPart(opts, built, metrics);
    else if (config.metricsPort !== undefined) {
      metricsServer = await listen(createMetricsApp(metrics), { host: config.host, port: config.metricsPort });
      log.info({ address: metricsServer.address, url: `${metricsServer.url}/metrics` }, 'metrics listening');
    }
  } catch (err) {
    await abortStart(built);
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    redisUrl: redis.url,
    receiver,
    failed,
    workspaces: spaces,
    metrics,
    metricsServer,
    close: () => (closing ??= shutdown(built, { receiver, metricsServer, workerStarting })),
  };
}

/** What one process built, for its parts started later and its ordered shutdown. */
interface Built {
  readonly config: Config;
  readonly log: Logger;
  readonly redis: ResolvedRedis;
  readonly tracing: Tracing;
  /** The process's own command connection (pump, queues, metrics, history of repeats). */
  readonly commands: RedisClient;
  readonly watch: RedisWatch;
  /** Aborted at shutdown or a failed start-up: a part still waiting for Redis gives up. */
  readonly stopping: AbortController;
  readonly spaces: readonly ServedWorkspace[];
  /** The handler slots every workspace's handler workers share (src/worker/fair.ts). */
  readonly pools: FairPools;
  /** The parts started (each workspace's worker), closed in order. */
  readonly parts: Part[];
}

/** What a workspace's gauges read on scrape: its queues and prefix, and (with a worker) its ordered handlers' lines. */
function metricSource(ws: ServedWorkspace, withWorker: boolean): WorkspaceSource {
  const ordered = () => (ws.worker ? ws.worker.orderBacklog() : Promise.resolve([]));
  return { id: ws.id, prefix: ws.config.queuePrefix, queues: ws.queues, ...(withWorker ? { ordered } : {}) };
}

/** Once Redis answers (an external one), what is unsafe in its settings is said at `warn`. */
function warnOfRedisSettings(commands: RedisClient, signal: AbortSignal, log: Logger): void {
  whenReady(commands, signal).then(
    async () => {
      for (const w of await redisWarnings(commands).catch(() => [])) log.warn(w);
    },
    () => undefined,
  );
}

/**
 * The worker needs Redis (BullMQ, the pause record): it starts once Redis answers. When the first attempt
 * succeeds it is started before startService resolves, as before.
 */
async function startWorkerPart(opts: ServiceOptions, built: Built, metrics: Metrics): Promise<void> {
  const start = opts.worker;
  if (!start) return;
  await whenReady(built.commands, built.stopping.signal);
  for (const ws of built.spaces) {
    const part = await start({
      config: ws.config,
      log: ws.log,
      redisUrl: built.redis.url,
      queues: ws.queues,
      hooks: metrics.workspace(ws.id).workerSubscriber,
      pools: built.pools,
    });
    if (built.stopping.signal.aborted) {
      await part.close(0);
      return;
    }
    built.parts.push(part);
    ws.worker = part;
  }
}

/** The receiver with its observers (metrics, capture, the caller's, history's repeats), `/metrics` and the dashboard. */
function startReceiverPart(opts: ServiceOptions, built: Built, metrics: Metrics): Promise<ReceiverService> {
  const { config, log } = built;
  return startReceiver({
    config,
    redisUrl: built.redis.url,
    log,
    workspaces: built.spaces,
    extend: (app) => {
      metrics.mount(app);
      mountDashboard(app, opts, built);
      opts.receiverOptions?.extend?.(app);
    },
  });
}

/**
 * The dashboard (ADMIN_USER): the board, deliveries, waits and reruns; in a deployment of many, each
 * workspace's pages under /admin/w/<id> (src/admin/workspaces.ts).
 */
function mountDashboard(app: Hono, opts: ServiceOptions, built: Built): void {
  const { config, log } = built;
  const pages = built.spaces.map((ws) => ({
    id: ws.id,
    queues: ws.queues.all,
    ...dashboardPages(ws, built.commands, opts.worker !== undefined),
  }));
  const only = pages[0] as (typeof pages)[number];
  const mounted = config.workspaces
    ? mountAdmin(app, { queues: [], admin: config.admin, workspaces: pages })
    : mountAdmin(app, { admin: config.admin, ...only });
  if (!mounted) return;
  if (config.workspaces)
    log.info("dashboard at /admin (basic auth; each workspace's deliveries and waiting runs at /admin/w/<id>/deliveries and /waits)");
  else log.info('dashboard at /admin (basic auth; deliveries at /admin/deliveries, waiting runs at /admin/waits)');
}

/** What one workspace's deliveries, waits and reruns pages read and act on. */
function dashboardPages(ws: ServedWorkspace, commands: RedisClient, withWorker: boolean) {
  const { config, queues } = ws;
  // Reruns start from the admin where handlers are loaded (a process with a worker); the budget is the workers'.
  const rerun = withWorker
    ? {
        handlers: () => ws.worker?.loaded() ?? [],
        budget: { burst: config.workspaceApiBurst, share: config.rerun.share, callsPer10s: rerunBurst(config) },
      }
    : undefined;
  const history = { redis: commands, prefix: config.queuePrefix };
  // The waits page's Cancel and Wake, recorded in the history when it is on.
  const notes = config.history.enabled ? runNoteWriter(commands, config.queuePrefix, config.history.ttlMs) : undefined;
  const waits = { queues: queues.handlers, ...(notes ? { history: notes } : {}) };
  return { history, waits, ...(rerun ? { rerun } : {}) };
}

/** Start-up failed: what was started is stopped (the managed Redis too, letting go of the state directory). */
async function abortStart(built: Built): Promise<void> {
  built.stopping.abort(new Error('start-up failed'));
  built.watch.close();
  await Promise.all(built.spaces.map((s) => s.pump.stop()));
  await Promise.allSettled(built.parts.map((p) => p.close(1_000)));
  await Promise.all(built.spaces.map((s) => s.queues.close()));
  await closeRedis(built.commands);
  await built.redis.managed?.stop();
  await built.tracing.shutdown().catch(() => undefined);
}

/** The ordered shutdown: HTTP first (in-flight requests finish), then pump, worker, queues, Redis, tracing. */
async function shutdown(
  built: Built,
  started: { receiver: ReceiverService | undefined; metricsServer: RunningServer | undefined; workerStarting: Promise<void> | undefined },
): Promise<void> {
  const { config, log, spaces, parts, redis, tracing } = built;
  const { receiver, metricsServer, workerStarting } = started;
  // One deadline for the whole shutdown (SHUTDOWN_TIMEOUT); each stage gets what is left of it.
  // Stopping early is safe: an active job's lock lapses and it runs again elsewhere (dedupe and steps absorb it).
  const deadline = Date.now() + config.shutdownTimeoutMs;
  const left = () => Math.max(0, deadline - Date.now());
  const bounded = (p: Promise<unknown>, what: string, atLeastMs = 0) => withinDeadline(p, what, Math.max(atLeastMs, left()), log);
  built.stopping.abort(new Error('shutting down'));
  if (receiver) await bounded(receiver.close(left()), 'receiver');
  for (const { capture } of spaces) if (capture) await bounded(capture.flush(), 'capture');
  for (const { duplicates } of spaces) duplicates?.flush();
  if (metricsServer) await bounded(metricsServer.close(Math.min(1_000, left())), 'metrics server');
  await bounded(Promise.all(spaces.map((s) => s.pump.stop())), 'ingest pump');
  if (workerStarting) await bounded(workerStarting, 'worker start-up');
  // Every workspace's worker at once: each stops taking work now, and their active runs finish within the same time.
  await Promise.all(parts.map((p) => bounded(p.close(left()), p.name)));
  await bounded(Promise.all(spaces.map((s) => s.queues.close())), 'queues');
  built.watch.close();
  await bounded(closeRedis(built.commands), 'Redis connection');
  built.commands.disconnect();
  // The managed redis-server flushes its AOF on SIGTERM: given its own few seconds past the deadline.
  if (redis.managed) await redis.managed.stop();
  // The spans still queued, within what is left of the deadline (at least a second).
  if (tracing.on) await bounded(tracing.shutdown(), 'tracing export', 1_000);
  log.info('stopped');
}

/** Waits for `p` at most `ms`; past it, or on an error, says so at `warn` and goes on. */
async function withinDeadline(p: Promise<unknown>, what: string, ms: number, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), ms);
  });
  try {
    if ((await Promise.race([p, timeout])) === 'timeout') log.warn(`shutdown deadline reached while stopping ${what}`);
  } catch (err) {
    log.warn({ err: String(err) }, `error while stopping ${what}`);
  } finally {
    clearTimeout(timer);
  }
}
