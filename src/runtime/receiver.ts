import type { Hono } from 'hono';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { IngestStore, ingestKeys, type DeliverySink } from '../queue/index.js';
import { createReceiverApp, DiskSpool, SpoolDrainer, spoolingSink } from '../receiver/index.js';
import type { IngestBus } from '../lifecycle/index.js';
import { closeRedis, createRedisConnection } from '../redis/index.js';
import { listen, type RunningServer } from './http.js';
import { firstAttempt } from './redis-watch.js';

export interface ReceiverService {
  readonly http: RunningServer;
  readonly app: Hono;
  /** Stops accepting, finishes in-flight requests, closes Redis; bounded by `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

export interface ReceiverServiceOptions {
  config: Config;
  redisUrl: string;
  log: Logger;
  /** The ingest stream the route and the spool drainer emit on (metrics, tracing, capture and history subscribe). */
  ingest?: IngestBus;
  extend?: (app: Hono) => void;
}

/** Answers repeated probes within `ms` from one check, so /readyz cannot be used to drive Redis writes. */
function cachedFor<T>(ms: number, probe: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!last || Date.now() - last.at >= ms) last = { at: Date.now(), value: probe() };
    return last.value;
  };
}

/** How long deliveries wait for the first connection attempt's outcome at start-up. */
const FIRST_CONNECT_WAIT_MS = 2_000;

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** Starts the HTTP receiver: fail-fast producer connection, ingest store, health. */
export async function startReceiver(opts: ReceiverServiceOptions): Promise<ReceiverService> {
  const { config, log } = opts;
  const producer = createRedisConnection(opts.redisUrl, 'producer', 'switchyard-receiver');
  producer.on('error', (err: Error) => log.debug({ err: err.message }, 'receiver redis connection error'));
  // The port opens at once, whether or not Redis answers (with SPOOL_DIR a receiver
  // started during an outage still takes deliveries). Without an offline queue a
  // command sent while the first connection attempt is under way would fail, so
  // deliveries wait for that attempt's outcome only (bounded), never for a down Redis.
  let connecting: Promise<unknown> | undefined = Promise.race([firstAttempt(producer), delay(FIRST_CONNECT_WAIT_MS)]).finally(() => {
    connecting = undefined;
  });
  const store = new IngestStore(producer, config.queuePrefix, config.dedupeTtlMs);
  const redisSink: DeliverySink = {
    put: (d, raw) => (connecting ? connecting.then(() => store.put(d, raw)) : store.put(d, raw)),
  };
  // SPOOL_DIR: deliveries Redis cannot take go to an fsync'd disk spool, drained back once Redis returns.
  const spool = config.spoolDir ? new DiskSpool(config.spoolDir, config.spoolMaxBytes) : undefined;
  const drainer = spool ? new SpoolDrainer(spool, store, log, opts.ingest) : undefined;
  drainer?.start();
  const sink = spool ? spoolingSink(redisSink, spool, log) : redisSink;
  const readinessKey = ingestKeys(config.queuePrefix).readiness;
  const spoolDetails = () =>
    spool ? { spool: { segments: spool.segments().length, bytes: spool.size(), max_bytes: spool.maxBytes } } : {};

  const app = createReceiverApp({
    config,
    webhookPath: config.webhookPath,
    sink,
    log,
    ...(opts.ingest ? { ingest: opts.ingest } : {}),
    readiness: cachedFor(1_000, async () => {
      try {
        await producer.set(readinessKey, String(Date.now()), 'PX', 60_000);
        return { ready: true, details: { redis: 'ok', ...spoolDetails() } };
      } catch (err) {
        // The answer is public: the reason (host, auth errors) goes to the log only.
        log.debug({ err: err instanceof Error ? err.message : String(err) }, 'readiness: Redis not writable');
        // With room in the spool, deliveries are still taken durably (202 spooled).
        const ready = spool !== undefined && spool.size() < spool.maxBytes;
        return { ready, details: { redis: 'unavailable', ...spoolDetails() } };
      }
    }),
    ...(opts.extend ? { extend: opts.extend } : {}),
  });
  const http = await listen(app, { host: config.host, port: config.port });
  // `address`: what the socket is bound to (0.0.0.0 = every interface); `url`: where to reach it from this host.
  log.info(
    { address: http.address, url: `${http.url}${config.webhookPath}`, secretCount: config.webhookSecrets.length },
    'receiver listening',
  );

  return {
    http,
    app,
    close: async (graceMs = config.shutdownTimeoutMs) => {
      await http.close(graceMs);
      await drainer?.stop();
      spool?.close();
      await closeRedis(producer);
    },
  };
}
