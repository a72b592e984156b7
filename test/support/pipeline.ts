import { Queue, type Job, type JobType } from 'bullmq';
import { Redis } from 'ioredis';
import { createSandbox, type RunningSandbox, type Sandbox } from '../../src/sandbox/index.js';
import type { StoredDelivery } from '../../src/queue/delivery.js';
import type { HandlerJobData } from '../../src/queue/jobs.js';
import type { DlqQueues } from '../../src/queue/dlq.js';
import { EVENTS_QUEUE, SCHEDULES_QUEUE } from '../../src/queue/names.js';
import { handlerQueueList, openHandlerQueues, type HandlerQueues } from '../../src/queue/queues.js';
import type { RunningService } from '../../src/runtime/service.js';
import { startService } from '../../src/runtime/service.js';
import { loadHandlerDir } from '../../src/handler/loader.js';
import { startWorker, type WorkerService } from '../../src/runtime/worker.js';
import { HandlerSet, handlerSnapshot } from '../../src/handler/set.js';
import { testRedisUrl, uniquePrefix } from './redis.js';
import { T } from './sandbox.js';
import { memoryLogger, TEST_SECRET, testConfig } from './service.js';

export const SANDBOX_TOKEN = T.full;

export interface Pipeline {
  sandbox: Sandbox;
  api: RunningSandbox;
  service: RunningService;
  worker: WorkerService;
  receiverUrl: string;
  prefix: string;
  redis: Redis;
  events: Queue<StoredDelivery>;
  /** The `normal` handler queue (every handler of the test fixtures is normal unless it says otherwise). */
  handlers: Queue<HandlerJobData>;
  /** The handler queue of each priority. */
  handlerQueues: HandlerQueues;
  /** The queues and connection the dead-letter tools take (`listDead`, `retryDead`, …). */
  dlq: DlqQueues;
  lines: string[];
  /** Entries of the sandbox request log (method, path, status, idempotency_key, …). */
  requests(filter?: { method?: string; path?: string }): Promise<SandboxRequest[]>;
  close(): Promise<void>;
}

export type { LoggedRequest as SandboxRequest } from '../../src/sandbox/request-log.js';
import type { LoggedRequest as SandboxRequest } from '../../src/sandbox/request-log.js';

/**
 * Sandbox + receiver + worker in this process on the shared test Redis:
 * signed deliveries go in over HTTP, API writes are observed in the sandbox.
 */
export async function startPipeline(opts: {
  handlersDir: string;
  env?: Record<string, string>;
  burst?: number;
  only?: string[];
}): Promise<Pipeline> {
  const prefix = uniquePrefix('pipe');
  const sandbox = createSandbox({ burst: opts.burst ?? 100, retry: { baseMs: 50, maxMs: 500 } });
  const api = await sandbox.listen(0);
  const env = {
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    WORKSPACE_API_URL: api.baseUrl,
    WORKSPACE_API_TOKEN: SANDBOX_TOKEN,
    WORKSPACE_API_BURST: String(opts.burst ?? 100),
    HANDLERS_DIR: opts.handlersDir,
    ...opts.env,
  };
  const config = testConfig(env);
  const { log, lines } = memoryLogger();
  let worker: WorkerService | undefined;
  const service = await startService({
    config,
    log,
    receiver: true,
    worker: async ({ redisUrl, queues, hooks }) => {
      const dir = await loadHandlerDir(opts.handlersDir, opts.only);
      const set = new HandlerSet(
        handlerSnapshot(
          dir.handlers.map((l) => l.handler),
          undefined,
          env,
          dir.schedules.map((l) => l.schedule),
        ),
      );
      worker = await startWorker({ config, redisUrl, log, hooks, set }, queues);
      return worker;
    },
  });
  const receiverUrl = `${service.receiver?.http.url}/webhooks`;
  sandbox.emitter.configure(receiverUrl, TEST_SECRET);
  const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  const events = new Queue<StoredDelivery>(EVENTS_QUEUE, { connection: redis, prefix });
  const handlerQueues = openHandlerQueues(redis, prefix);
  const handlers = handlerQueues.normal as Queue<HandlerJobData>;
  const schedules = new Queue(SCHEDULES_QUEUE, { connection: redis, prefix });
  return {
    sandbox,
    api,
    service,
    worker: worker as unknown as WorkerService,
    receiverUrl,
    prefix,
    redis,
    events,
    handlers,
    handlerQueues,
    lines,
    dlq: { events, handlers: handlerQueues, schedules, redis, prefix },
    requests: async (filter = {}) => {
      const q = new URLSearchParams(filter as Record<string, string>).toString();
      const r = await fetch(`${api.url}/_sandbox/requests${q ? `?${q}` : ''}`);
      return ((await r.json()) as { data: SandboxRequest[] }).data;
    },
    close: async () => {
      sandbox.emitter.configure(null, null);
      await service.close();
      await api.close();
      await Promise.allSettled([events, ...handlerQueueList(handlerQueues), schedules].map((q) => q.close()));
      redis.disconnect();
    },
  };
}

/** A sandbox API answer's JSON body: `data` for a resource, other keys for errors. */
type SandboxJson = { data?: unknown; [k: string]: unknown };

/** Calls the sandbox API as the full-access teammate. */
export async function sandboxCall(
  p: Pipeline,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: SandboxJson }> {
  const r = await fetch(`${p.api.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${SANDBOX_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, json: text ? (JSON.parse(text) as SandboxJson) : {} };
}

/** Job counts of every handler queue (all priorities) added up. */
export async function handlerJobCounts(p: Pipeline, ...states: JobType[]): Promise<Record<string, number>> {
  const all = await Promise.all(handlerQueueList(p.handlerQueues).map((q) => q.getJobCounts(...states)));
  const out: Record<string, number> = {};
  for (const counts of all) for (const [k, v] of Object.entries(counts)) out[k] = (out[k] ?? 0) + v;
  return out;
}

/** Jobs of every handler queue (all priorities) in the given states. */
export async function handlerJobs(
  p: Pipeline,
  states: ('completed' | 'failed' | 'waiting' | 'active' | 'delayed')[],
): Promise<Job<HandlerJobData>[]> {
  return (await Promise.all(handlerQueueList(p.handlerQueues).map((q) => q.getJobs(states) as Promise<Job<HandlerJobData>[]>))).flat();
}
