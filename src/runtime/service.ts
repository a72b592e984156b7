import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { type IngestPump, openQueues } from '../queue/index.js';
import { redisWarnings, closeRedis, createRedisConnection, maskRedisUrl } from '../redis/index.js';
import { mountAdmin } from '../admin/index.js';
import { createCapture, type Capture } from '../capture/index.js';
import { duplicateHistory } from '../history/index.js';
import { composeReceiverHooks, createMetrics, createMetricsApp, type Metrics } from '../metrics/index.js';
import { listen, type RunningServer } from './http.js';
import { resolveRedis } from './redis.js';
import { firstAttempt, watchRedis, whenReady } from './redis-watch.js';
import { startPump } from './pump.js';
import { startTracing } from '../telemetry/index.js';
import { startReceiver, type ReceiverService, type ReceiverServiceOptions } from './receiver.js';
import type { StartWorkerPart } from './worker.js';

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
  receiverOptions?: Partial<Pick<ReceiverServiceOptions, 'hooks' | 'extend'>>;
  /** The command this process runs (`start`, `dev`, `work`), named in its state directory's lock. */
  command?: string;
}

export interface RunningService {
  readonly redisUrl: string;
  readonly receiver: ReceiverService | undefined;
  /** The ingest pump; started only where `INGEST_PUMP` says (default: processes with a worker). */
  readonly pump: IngestPump;
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
  const first = firstAttempt(commands);
  const stopping = new AbortController();
  if (!redis.managed) {
    whenReady(commands, stopping.signal).then(
      async () => {
        for (const w of await redisWarnings(commands).catch(() => [])) log.warn(w);
      },
      () => undefined,
    );
  }
  const queues = openQueues(commands, config.queuePrefix);
  const pump = startPump({ config, log, redisUrl: redis.url, commands, queues, withWorker: opts.worker !== undefined });

  // Each process serves its own metrics; queue depth and pause state are read from Redis on scrape.
  const metrics = createMetrics({ prefix: config.queuePrefix, queues, redis: commands });
  const capture: Capture | undefined = config.captureDir
    ? createCapture({ dir: config.captureDir, redact: config.captureRedact, path: config.webhookPath, log })
    : undefined;

  // History counts the repeats the receiver answered 200 duplicate, batched off the request path.
  const duplicates = opts.receiver ? duplicateHistory(config, commands, log) : undefined;

  const parts: Part[] = [];
  let failure: ((err: Error) => void) | undefined;
  const failed = new Promise<Error>((res) => {
    failure = res;
  });
  // The worker needs Redis (BullMQ, the pause record): it starts once Redis answers.
  // When the first attempt succeeds it is started before this resolves, as before.
  const startWorker = async (): Promise<void> => {
    if (!opts.worker) return;
    await whenReady(commands, stopping.signal);
    const part = await opts.worker({ redisUrl: redis.url, queues, hooks: metrics.workerObserver });
    if (stopping.signal.aborted) await part.close(0);
    else {
      parts.push(part);
      metrics.bind({ ordered: () => part.orderBacklog() });
    }
  };
  let receiver: ReceiverService | undefined;
  let metricsServer: RunningServer | undefined;
  let workerStarting: Promise<void> | undefined;
  try {
    if ((await first) === 'ready') await startWorker();
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
    if (opts.receiver) {
      receiver = await startReceiver({
        config,
        redisUrl: redis.url,
        log,
        hooks: composeReceiverHooks(
          metrics.receiverHooks,
          capture ? { onStored: capture.onStored } : undefined,
          opts.receiverOptions?.hooks,
          duplicates
            ? {
                onDelivery: (r) => {
                  if (r.outcome === 'duplicate' && r.key) duplicates.onDuplicate(r.key);
                },
              }
            : undefined,
        ),
        extend: (app) => {
          metrics.mount(app);
          if (mountAdmin(app, { queues: queues.all, admin: config.admin, history: { redis: commands, prefix: config.queuePrefix } }))
            log.info('dashboard at /admin (basic auth; deliveries at /admin/deliveries, waiting runs at /admin/waits)');
          opts.receiverOptions?.extend?.(app);
        },
      });
    } else if (config.metricsPort !== undefined) {
      metricsServer = await listen(createMetricsApp(metrics), { host: config.host, port: config.metricsPort });
      log.info({ address: metricsServer.address, url: `${metricsServer.url}/metrics` }, 'metrics listening');
    }
  } catch (err) {
    stopping.abort(new Error('start-up failed'));
    watch.close();
    await pump.stop();
    await Promise.allSettled(parts.map((p) => p.close(1_000)));
    await queues.close();
    await closeRedis(commands);
    await redis.managed?.stop();
    await tracing.shutdown().catch(() => undefined);
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    redisUrl: redis.url,
    receiver,
    failed,
    pump,
    metrics,
    metricsServer,
    close: () => {
      closing ??= (async () => {
        // One deadline for the whole shutdown (SHUTDOWN_TIMEOUT); each stage gets what is left of it.
        // Stopping early is safe: an active job's lock lapses and it runs again elsewhere (dedupe and steps absorb it).
        const deadline = Date.now() + config.shutdownTimeoutMs;
        const left = () => Math.max(0, deadline - Date.now());
        const bounded = async (p: Promise<unknown>, what: string, atLeastMs = 0) => {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<'timeout'>((r) => {
            timer = setTimeout(() => r('timeout'), Math.max(atLeastMs, left()));
          });
          try {
            if ((await Promise.race([p, timeout])) === 'timeout') log.warn(`shutdown deadline reached while stopping ${what}`);
          } catch (err) {
            log.warn({ err: String(err) }, `error while stopping ${what}`);
          } finally {
            clearTimeout(timer);
          }
        };
        stopping.abort(new Error('shutting down'));
        if (receiver) await bounded(receiver.close(left()), 'receiver');
        if (capture) await bounded(capture.flush(), 'capture');
        duplicates?.flush();
        if (metricsServer) await bounded(metricsServer.close(Math.min(1_000, left())), 'metrics server');
        await bounded(pump.stop(), 'ingest pump');
        if (workerStarting) await bounded(workerStarting, 'worker start-up');
        for (const p of parts) await bounded(p.close(left()), p.name);
        await bounded(queues.close(), 'queues');
        watch.close();
        await bounded(closeRedis(commands), 'Redis connection');
        commands.disconnect();
        // The managed redis-server flushes its AOF on SIGTERM: given its own few seconds past the deadline.
        if (redis.managed) await redis.managed.stop();
        // The spans still queued, within what is left of the deadline (at least a second).
        if (tracing.on) await bounded(tracing.shutdown(), 'tracing export', 1_000);
        log.info('stopped');
      })();
      return closing;
    },
  };
}
