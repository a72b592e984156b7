import type { Queue } from 'bullmq';
import type { Context, Hono } from 'hono';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { LifecycleSubscriber, IngestSubscriber } from '../lifecycle/index.js';
import { defineMetrics } from './definitions.js';
import { ingestSubscriber } from './ingest-subscriber.js';
import { queueGauges, type MetricSources, type WorkspaceSource } from './queue-collector.js';
import { workerRecorder, workerSubscriber, type PauseFlag, type WorkerRecorder } from './worker-subscriber.js';
import type { RedisClient } from '../redis/index.js';

/** The `workspace` label of a deployment of one (DEFAULT_WORKSPACE of src/config). */
const DEFAULT_WORKSPACE_LABEL = 'default';

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /** The BullMQ queues whose job counts are exported on scrape (may be bound later with `bind`). */
  queues?: { all: readonly Queue[] };
  /** A command connection for the inbox length and the pause state (may be bound later with `bind`). */
  redis?: RedisClient;
  /** The queue prefix (`QUEUE_PREFIX`), to find Switchyard's own keys. */
  prefix: string;
  /** The workspace of `prefix` and `queues`, and of `ingestSubscriber`/`workerSubscriber`: its `workspace` label. Default `default`. */
  workspace?: string;
  /** Collect Node's default process metrics (CPU, memory, event loop, GC). Default true. */
  defaultMetrics?: boolean;
}

/** The subscribers of one workspace's streams: their series carry its `workspace` label. */
export interface WorkspaceMetrics {
  /** Subscribe to the workspace's ingest stream (the delivery series, spool drains). */
  readonly ingestSubscriber: IngestSubscriber;
  /** What the worker's series record (fed by {@link WorkspaceMetrics.workerSubscriber}). */
  readonly workerRecorder: WorkerRecorder;
  /** Subscribe to the workspace worker's lifecycle stream (pass as its worker's `hooks`). */
  readonly workerSubscriber: LifecycleSubscriber;
}

/**
 * One process's metrics: a private registry, its subscribers of the lifecycle streams, and its HTTP exposition.
 * The subscribers on it are those of its first workspace (`options.workspace`); {@link Metrics.workspace} gives
 * another's.
 */
export interface Metrics extends WorkspaceMetrics {
  /** A per-process registry; the prom-client global registry is never touched. */
  readonly registry: Registry;
  /** The subscribers of workspace `id` (made once per id: its delivery outcomes pre-set to 0). */
  workspace(id: string): WorkspaceMetrics;
  /**
   * Binds (or replaces) the scrape-time sources once they exist, e.g. after the service opened its queues:
   * the first workspace's queues and ordered lines, the Redis connection, or every workspace's sources.
   */
  bind(sources: Pick<WorkspaceSource, 'queues' | 'ordered'> & { redis?: RedisClient; workspaces?: WorkspaceSource[] }): void;
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
  const first = opts.workspace ?? DEFAULT_WORKSPACE_LABEL;
  const pauses = new Map<string, PauseFlag>();
  const pauseOf = (id: string): PauseFlag => pauses.get(id) ?? (pauses.set(id, { paused: false }).get(id) as PauseFlag);
  const sources: MetricSources = { workspaces: [{ id: first, prefix: opts.prefix, queues: opts.queues }], redis: opts.redis };
  const gauges = queueGauges(registry, sources, pauseOf);
  const bound = () => sources.redis !== undefined || sources.workspaces.some((w) => w.queues !== undefined);
  if (bound()) gauges.activate();

  const scrape = (): Promise<string> => registry.metrics();
  const handler =
    () =>
    async (c: Context): Promise<Response> => {
      const body = await scrape();
      return c.body(body, 200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
    };

  const made = new Map<string, WorkspaceMetrics>();
  const workspace = (id: string): WorkspaceMetrics => {
    let w = made.get(id);
    if (!w) {
      const recorder = workerRecorder(m, pauseOf(id), id);
      made.set(
        id,
        (w = { ingestSubscriber: ingestSubscriber(m, id), workerRecorder: recorder, workerSubscriber: workerSubscriber(recorder) }),
      );
    }
    return w;
  };
  return {
    registry,
    ...workspace(first),
    workspace,
    bind(next) {
      if (next.workspaces) sources.workspaces = next.workspaces;
      const head = sources.workspaces[0];
      if (head && (next.queues || next.ordered))
        sources.workspaces[0] = {
          ...head,
          ...(next.queues ? { queues: next.queues } : {}),
          ...(next.ordered ? { ordered: next.ordered } : {}),
        };
      if (next.redis) sources.redis = next.redis;
      if (bound()) gauges.activate();
    },
    scrape,
    handler,
    mount(app, path = '/metrics') {
      app.get(path, handler());
    },
  };
}
