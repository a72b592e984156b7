import type { Hono } from 'hono';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { IngestStore, ingestKeys, type DeliverySink } from '../queue/index.js';
import {
  createReceiverApp,
  DiskSpool,
  SpoolDrainer,
  spoolingSink,
  type ManyWebhookRoutes,
  type OneWebhookRoute,
} from '../receiver/index.js';
import type { IngestBus } from '../lifecycle/index.js';
import { closeRedis, createRedisConnection, type RedisClient } from '../redis/index.js';
import { listen, type RunningServer } from './http.js';
import { firstAttempt } from './redis-watch.js';

export interface ReceiverService {
  readonly http: RunningServer;
  readonly app: Hono;
  /** Stops accepting, finishes in-flight requests, closes Redis; bounded by `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

export interface ReceiverServiceOptions {
  /** The deployment's Config (HTTP settings, WEBHOOK_PATH, the workspaces it serves). */
  config: Config;
  redisUrl: string;
  log: Logger;
  /** Each workspace served: its Config (prefix, secrets, webhook path, spool), its logger and its ingest stream. */
  workspaces: readonly ReceivingWorkspace[];
  extend?: (app: Hono) => void;
}

/** One workspace's side of the receiver. */
export interface ReceivingWorkspace {
  readonly config: Config;
  readonly log: Logger;
  /** The ingest stream its route and spool drainer emit on (metrics, tracing, capture and history subscribe). */
  readonly ingest?: IngestBus;
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

/** One workspace's durable path: its ingest store (its prefix), its spool (SPOOL_DIR/<id>) and drainer. */
interface Intake {
  readonly ws: ReceivingWorkspace;
  readonly sink: DeliverySink;
  readonly spool: DiskSpool | undefined;
  readonly drainer: SpoolDrainer | undefined;
}

function intake(ws: ReceivingWorkspace, producer: RedisClient, connected: () => Promise<unknown> | undefined): Intake {
  const { config, log } = ws;
  const store = new IngestStore(producer, config.queuePrefix, config.dedupeTtlMs);
  const redisSink: DeliverySink = {
    put: (d, raw) => connected()?.then(() => store.put(d, raw)) ?? store.put(d, raw),
  };
  // SPOOL_DIR: deliveries Redis cannot take go to an fsync'd disk spool, drained back once Redis returns.
  const spool = config.spoolDir ? new DiskSpool(config.spoolDir, config.spoolMaxBytes) : undefined;
  const drainer = spool ? new SpoolDrainer(spool, store, log, ws.ingest) : undefined;
  drainer?.start();
  return { ws, sink: spool ? spoolingSink(redisSink, spool, log) : redisSink, spool, drainer };
}

/** The spools' state as /readyz details: summed over the workspaces' spools (none: nothing). */
function spoolDetails(spools: readonly DiskSpool[]) {
  if (spools.length === 0) return {};
  const sum = (f: (s: DiskSpool) => number) => spools.reduce((n, s) => n + f(s), 0);
  return { spool: { segments: sum((s) => s.segments().length), bytes: sum((s) => s.size()), max_bytes: sum((s) => s.maxBytes) } };
}

/** The webhook routes: `WEBHOOK_PATH` in a deployment of one, `WEBHOOK_PATH/<id>` per workspace in a deployment of many. */
function webhookRoutes(config: Config, log: Logger, intakes: readonly Intake[]): OneWebhookRoute | ManyWebhookRoutes {
  const route = (i: Intake) => ({ config: i.ws.config, sink: i.sink, log: i.ws.log, ...(i.ws.ingest ? { ingest: i.ws.ingest } : {}) });
  if (!config.workspaces) return { webhookPath: config.webhookPath, ...route(intakes[0] as Intake) };
  return {
    log,
    workspaces: { base: config.webhookPath, routes: intakes.map((i) => ({ path: i.ws.config.webhookPath, route: route(i) })) },
  };
}

/** Starts the HTTP receiver: fail-fast producer connection, an ingest store per workspace, health. */
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
  const intakes = opts.workspaces.map((ws) => intake(ws, producer, () => connecting));
  const spools = intakes.flatMap((i) => (i.spool ? [i.spool] : []));
  const readinessKey = ingestKeys(config.queuePrefix).readiness;

  const app = createReceiverApp({
    ...webhookRoutes(config, log, intakes),
    readiness: cachedFor(1_000, async () => {
      try {
        await producer.set(readinessKey, String(Date.now()), 'PX', 60_000);
        return { ready: true, details: { redis: 'ok', ...spoolDetails(spools) } };
      } catch (err) {
        // The answer is public: the reason (host, auth errors) goes to the log only.
        log.debug({ err: err instanceof Error ? err.message : String(err) }, 'readiness: Redis not writable');
        // With room in every spool, deliveries are still taken durably (202 spooled).
        const ready = intakes.every((i) => i.spool !== undefined && i.spool.size() < i.spool.maxBytes);
        return { ready, details: { redis: 'unavailable', ...spoolDetails(spools) } };
      }
    }),
    ...(opts.extend ? { extend: opts.extend } : {}),
  });
  const http = await listen(app, { host: config.host, port: config.port });
  // `address`: what the socket is bound to (0.0.0.0 = every interface); `url`: where to reach it from this host.
  for (const { ws } of intakes)
    ws.log.info(
      { address: http.address, url: `${http.url}${ws.config.webhookPath}`, secretCount: ws.config.webhookSecrets.length },
      'receiver listening',
    );

  return {
    http,
    app,
    close: async (graceMs = config.shutdownTimeoutMs) => {
      await http.close(graceMs);
      await Promise.all(intakes.flatMap((i) => (i.drainer ? [i.drainer.stop()] : [])));
      for (const s of spools) s.close();
      await closeRedis(producer);
    },
  };
}
