import type { Queue } from 'bullmq';
import { Gauge, type Registry } from 'prom-client';
import { ingestKeys, pauseState, RunRecords } from '../queue/index.js';
import type { PauseFlag } from './worker-subscriber.js';
import type { RedisClient } from '../redis/index.js';

/** What the scrape-time gauges read of one workspace (its `workspace` label). */
export interface WorkspaceSource {
  readonly id: string;
  /** Its queue prefix, to find its own keys (inbox, pause record, parked runs). */
  readonly prefix: string;
  /** Every queue of it (events and the handler queues). */
  readonly queues?: { all: readonly Queue[] } | undefined;
  /** The backlog of each ordered handler's key lines (bound by a worker process). */
  readonly ordered?: (() => Promise<readonly OrderedBacklog[]>) | undefined;
}

/** What the scrape-time gauges read; either part may be bound after start-up. */
export interface MetricSources {
  /** Each workspace served (one, `default`, in a deployment of one). */
  workspaces: WorkspaceSource[];
  redis?: RedisClient | undefined;
}

/** One ordered handler's lines: keys with runs not yet over, those runs, the longest line. */
export interface OrderedBacklog {
  readonly handler: string;
  readonly keys: number;
  readonly pending: number;
  readonly longest: number;
}

/** One workspace's shared state read from Redis once per scrape (null: no source bound for it). */
interface WorkspaceSnapshot {
  readonly id: string;
  readonly counts: ReadonlyArray<readonly [string, Record<string, number>]> | null;
  readonly inbox: number | null;
  readonly paused: boolean | null;
  readonly ordered: readonly OrderedBacklog[] | null;
  /** Runs parked in a durable sleep or wait. */
  readonly parked: number | null;
}

/** Shared state read from Redis once per scrape. */
interface Snapshot {
  /** Empty when nothing was bound or a read failed. */
  readonly workspaces: readonly WorkspaceSnapshot[];
  /** null when nothing was bound; false when a read failed or timed out. */
  readonly ok: boolean | null;
}

/** A scrape never waits longer than this on Redis: a slow or absent Redis leaves series out, never the scrape. */
const SCRAPE_TIMEOUT_MS = 2_000;

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('metrics scrape timed out')), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

async function readWorkspace(ws: WorkspaceSource, redis: RedisClient | undefined): Promise<WorkspaceSnapshot> {
  const { queues, prefix } = ws;
  const [counts, inbox, paused, ordered, parked] = await Promise.all([
    queues ? Promise.all(queues.all.map(async (q) => [q.name, await q.getJobCounts()] as const)) : null,
    redis ? redis.llen(ingestKeys(prefix).inbox) : null,
    redis ? pauseState(redis, prefix).then((p) => p !== null) : null,
    ws.ordered ? ws.ordered() : null,
    redis ? new RunRecords(redis, prefix).count() : null,
  ]);
  return { id: ws.id, counts, inbox, paused, ordered, parked };
}

async function read(sources: MetricSources): Promise<Snapshot> {
  const bound = sources.redis !== undefined || sources.workspaces.some((w) => w.queues !== undefined);
  if (!bound) return { workspaces: [], ok: null };
  try {
    const workspaces = await within(Promise.all(sources.workspaces.map((w) => readWorkspace(w, sources.redis))), SCRAPE_TIMEOUT_MS);
    return { workspaces, ok: true };
  } catch {
    return { workspaces: [], ok: false };
  }
}

/**
 * Gauges read from Redis on each scrape (so every process reports the shared
 * state, whoever changed it): BullMQ job counts per queue and state, the ingest
 * inbox length, whether the `handlers` queue is paused, and whether Redis answered.
 * prom-client collects gauges concurrently; they share one in-flight read.
 *
 * The paused gauge always exists (without Redis it reports the last pause this
 * process saw); the others are registered by `activate()` once a source is bound,
 * so a process without Redis exports no misleading zeros.
 */
export function queueGauges(registry: Registry, sources: MetricSources, pauses: (workspace: string) => PauseFlag): { activate(): void } {
  const registers = [registry];
  let inFlight: Promise<Snapshot> | undefined;
  const snapshot = (): Promise<Snapshot> => {
    inFlight ??= read(sources).finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  new Gauge({
    name: 'switchyard_handlers_paused',
    help: '1 while the handlers queue is paused for an unusable API token (shared state in RedisClient), else 0',
    labelNames: ['workspace'] as const,
    registers,
    async collect() {
      const read = new Map((await snapshot()).workspaces.map((w) => [w.id, w.paused]));
      for (const { id } of sources.workspaces) {
        const pause = pauses(id);
        // Without Redis (or when it did not answer) the last pause this process saw is reported.
        const paused = read.get(id);
        if (paused !== undefined && paused !== null) pause.paused = paused;
        this.set({ workspace: id }, pause.paused ? 1 : 0);
      }
    },
  });

  let active = false;
  return {
    activate(): void {
      if (active) return;
      active = true;
      sharedGauges(registers, snapshot, () => sources.workspaces.map((w) => w.id));
    },
  };
}

/**
 * The gauges of the shared state, registered once a source is bound: whether Redis answered, BullMQ job
 * counts, the ordered handlers' lines, parked runs and the ingest inbox length, all from one snapshot.
 */
function sharedGauges(registers: Registry[], snapshot: () => Promise<Snapshot>, ids: () => string[]): void {
  new Gauge({
    name: 'switchyard_redis_up',
    help: '1 when this scrape could read queue state from Redis, 0 when it could not',
    registers,
    async collect() {
      const { ok } = await snapshot();
      this.set(ok ? 1 : 0);
    },
  });
  new Gauge({
    name: 'switchyard_queue_jobs',
    help:
      'BullMQ jobs per queue and state ' +
      '(waiting, active, delayed, prioritized, waiting-children, paused, completed, failed), read on scrape',
    labelNames: ['queue', 'state', 'workspace'] as const,
    registers,
    async collect() {
      this.reset();
      for (const { id: workspace, counts } of (await snapshot()).workspaces) {
        for (const [queue, byState] of counts ?? [])
          for (const [state, n] of Object.entries(byState)) this.set({ queue, state, workspace }, n);
      }
    },
  });
  new Gauge({
    name: 'switchyard_ordered_backlog',
    help:
      'Key lines of handlers with orderBy, read on scrape: keys with runs not yet over (measure=keys), ' +
      'those runs (pending), the longest line of one key (longest)',
    labelNames: ['handler', 'measure', 'workspace'] as const,
    registers,
    async collect() {
      this.reset();
      for (const { id: workspace, ordered } of (await snapshot()).workspaces) {
        for (const b of ordered ?? []) {
          this.set({ handler: b.handler, measure: 'keys', workspace }, b.keys);
          this.set({ handler: b.handler, measure: 'pending', workspace }, b.pending);
          this.set({ handler: b.handler, measure: 'longest', workspace }, b.longest);
        }
      }
    },
  });
  new Gauge({
    name: 'switchyard_waits_pending',
    help: 'Handler runs parked in a durable sleep or wait (switchyard waits lists them), read on scrape (0 when Redis did not answer)',
    labelNames: ['workspace'] as const,
    registers,
    async collect() {
      await perWorkspace(this, snapshot, ids, (w) => w.parked);
    },
  });
  new Gauge({
    name: 'switchyard_ingest_inbox_length',
    help: 'Verified deliveries in the ingest inbox not yet moved into the events queue, read on scrape (0 when Redis did not answer)',
    labelNames: ['workspace'] as const,
    registers,
    async collect() {
      await perWorkspace(this, snapshot, ids, (w) => w.inbox);
    },
  });
}

/** A gauge of one number per workspace: 0 for a workspace not read (Redis did not answer). */
async function perWorkspace(
  gauge: Gauge<'workspace'>,
  snapshot: () => Promise<Snapshot>,
  ids: () => string[],
  value: (w: WorkspaceSnapshot) => number | null,
): Promise<void> {
  const read = new Map((await snapshot()).workspaces.map((w) => [w.id, value(w)]));
  gauge.reset();
  for (const workspace of ids()) gauge.set({ workspace }, read.get(workspace) ?? 0);
}
