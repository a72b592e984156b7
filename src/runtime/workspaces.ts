import { join } from 'node:path';
import { workspaceConfigs, type Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { type IngestPump, openQueues, type Queues } from '../queue/index.js';
import type { RedisClient } from '../redis/index.js';
import { duplicateHistory } from '../history/index.js';
import { IngestBus } from '../lifecycle/index.js';
import type { Metrics, WorkspaceMetrics } from '../metrics/index.js';
import { createCapture, type Capture } from '../receiver/index.js';
import { ingestTracingObserver } from '../telemetry/index.js';
import { startPump } from './pump.js';
import type { WorkerService } from './worker.js';

/**
 * One workspace a process serves (a deployment of one serves one, `default`): its Config (prefix, secrets,
 * webhook path, spool directory, API), its logger (a child naming the workspace in a deployment of many), its
 * BullMQ queues, its ingest stream and pump, and its worker part once started.
 */
export interface ServedWorkspace {
  readonly id: string;
  readonly config: Config;
  readonly log: Logger;
  readonly queues: Queues;
  /** The ingest stream its webhook route, spool drainer and pump emit on. */
  readonly ingest: IngestBus;
  readonly pump: IngestPump;
  readonly capture: Capture | undefined;
  readonly duplicates: ReturnType<typeof duplicateHistory>;
  /** Its worker part once started (the admin re-runs its handlers). */
  worker?: WorkerService;
}

/** What every workspace of the process shares. */
export interface SharedParts {
  readonly log: Logger;
  readonly redisUrl: string;
  /** The process's command connection: every workspace's queues, pump commands and history of repeats. */
  readonly commands: RedisClient;
  readonly metrics: Metrics;
  readonly receiver: boolean;
  readonly withWorker: boolean;
}

/** Whether the config is a deployment of many (WORKSPACES_FILE), whose logs and captures name the workspace. */
export const servesMany = (config: Pick<Config, 'workspaces'>): boolean => config.workspaces !== undefined;

/** The workspaces of `config` (`workspaceConfigs`), each with its queues, ingest stream and pump. */
export function openWorkspaces(config: Config, shared: SharedParts): ServedWorkspace[] {
  const many = servesMany(config);
  return workspaceConfigs(config).map((ws) => {
    const log = many ? shared.log.child({ workspace: ws.workspaceId }) : shared.log;
    const queues = openQueues(shared.commands, ws.queuePrefix);
    const capture = captureOf(ws, log, many);
    // History counts the repeats the receiver answered 200 duplicate, batched off the request path.
    const duplicates = shared.receiver ? duplicateHistory(ws, shared.commands, log) : undefined;
    const ingest = ingestStream(shared.metrics.workspace(ws.workspaceId), capture, duplicates);
    const pump = startPump({
      config: ws,
      log,
      redisUrl: shared.redisUrl,
      commands: shared.commands,
      queues,
      ingest,
      withWorker: shared.withWorker,
    });
    return { id: ws.workspaceId, config: ws, log, queues, ingest, pump, capture, duplicates };
  });
}

/** CAPTURE_DIR: in a deployment of many each workspace's fixtures go to `<CAPTURE_DIR>/<id>`, its path in each file. */
function captureOf(ws: Config, log: Logger, many: boolean): Capture | undefined {
  if (!ws.captureDir) return undefined;
  const dir = many ? join(ws.captureDir, ws.workspaceId) : ws.captureDir;
  return createCapture({ dir, redact: ws.captureRedact, path: ws.webhookPath, log });
}

/**
 * The ingest stream (src/lifecycle) of one workspace: its webhook route, spool drainer and pump emit. Its
 * observers, subscribed here only: metrics, capture (CAPTURE_DIR), the history's repeats and tracing
 * (receipt, append, send spans).
 */
function ingestStream(metrics: WorkspaceMetrics, capture: Capture | undefined, duplicates: ReturnType<typeof duplicateHistory>): IngestBus {
  return new IngestBus()
    .subscribe(metrics.ingestSubscriber)
    .subscribe(capture?.subscriber)
    .subscribe(
      duplicates && {
        answered: (e) => {
          if (e.ok && e.report.outcome === 'duplicate' && e.report.key) duplicates.onDuplicate(e.report.key);
        },
      },
    )
    .subscribe(ingestTracingObserver());
}
