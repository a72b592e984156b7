import type { Queue } from 'bullmq';
import type { Context, Hono } from 'hono';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { LifecycleSubscriber, IngestSubscriber } from '../lifecycle/index.js';
import { defineMetrics } from './definitions.js';
import { ingestSubscriber } from './ingest-subscriber.js';
import { queueGauges, type MetricSources } from './queue-collector.js';
import { workerRecorder, workerSubscriber, type PauseFlag, type WorkerRecorder } from './worker-subscriber.js';
import type { RedisClient } from '../redis/index.js';

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /** The BullMQ queues whose job counts are exported on scrape (may be bound later with `bind`). */
  queues?: { all: readonly Queue[] };
  /** A command connection for the inbox length and the pause state (may be bound later with `bind`). */
  redis?: RedisClient;
  /** The queue prefix (`QUEUE_PREFIX`), to find Switchyard's own keys. */
  prefix: string;
  /** Collect Node's default process metrics (CPU, memory, event loop, GC). Default true. */
  defaultMetrics?: boolean;
}

/** One process's metrics: a private registry, its subscribers of the lifecycle streams, and its HTTP exposition. */
export interface Metrics {
  /** A per-process registry; the prom-client global registry is never touched. */
  readonly registry: Registry;
  /** Subscribe to the ingest stream (the delivery series, spool drains). */
  readonly ingestSubscriber: IngestSubscriber;
  /** What the worker's series record (fed by {@link Metrics.workerSubscriber}). */
  readonly workerRecorder: WorkerRecorder;
  /** Subscribe to the worker's lifecycle stream (pass as the worker's `hooks`). */
  readonly workerSubscriber: LifecycleSubscriber;
  /** Binds (or replaces) the scrape-time sources once they exist, e.g. after the service opened its queues. */
  bind(sources: Pick<MetricSources, 'queues' | 'redis' | 'ordered'>): void;
  /** The Prometheus text exposition of every series, as `GET /metrics` serves it. */
  scrape(): Promise<string>;
  /** A Hono handler answering with {@link Metrics.scrape}. */
  handler(): (c: Context) => Promise<Response>;
  /** Mounts `GET <path>` (default `/metrics`) on `app`. */
  mount(app: Hono, path?: string): void;
}

/**
 * Creates the metrics of one process. Each process (receiver, worker) serves its
 * own `/metrics`; Prometheus scrapes them all (see docs/operations.md). Queue
 * depth and the pause state are read from Redis on scrape, so they are the same
 * shared numbers in every process; counters and histograms are per process.
 */
export function createMetrics(opts: MetricsOptions): Metrics {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const m = defineMetrics(registry);
  const pause: PauseFlag = { paused: false };
  const sources: MetricSources = { queues: opts.queues, redis: opts.redis };
  const gauges = queueGauges(registry, sources, opts.prefix, pause);
  if (sources.queues || sources.redis) gauges.activate();

  const scrape = (): Promise<string> => registry.metrics();
  const handler =
    () =>
    async (c: Context): Promise<Response> => {
      const body = await scrape();
      return c.body(body, 200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
    };

  const recorder = workerRecorder(m, pause);
  return {
    registry,
    ingestSubscriber: ingestSubscriber(m),
    workerRecorder: recorder,
    workerSubscriber: workerSubscriber(recorder),
    bind(next) {
      if (next.queues) sources.queues = next.queues;
      if (next.redis) sources.redis = next.redis;
      if (next.ordered) sources.ordered = next.ordered;
      if (sources.queues || sources.redis) gauges.activate();
    },
    scrape,
    handler,
    mount(app, path = '/metrics') {
      app.get(path, handler());
    },
  };
}
