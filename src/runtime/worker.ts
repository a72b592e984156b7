import { Worker, type Queue } from 'bullmq';
import { secretVariables, type Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import {
  type StoredDelivery,
  ChangeClaims,
  markWorld,
  WorldMark,
  type HandlerJobData,
  EVENTS_QUEUE,
  HANDLER_QUEUE_BY_PRIORITY,
  FlowControl,
  BullFlowJobs,
  flowFailedListener,
  resumeIfTokenChanged,
  tokenHash,
  type Queues,
  WaitStore,
  RunRecords,
  HandlerStateStore,
  FanOutChecks,
  FAN_OUT_CHECK_SCRIPT,
} from '../queue/index.js';
import type { OrderedBacklog } from '../metrics/index.js';
import { PRIORITIES, type Priority } from '../util/index.js';
import { closeRedis, createRedisConnection, ownedConnections, type RedisClient } from '../redis/index.js';
import { historyObserver } from '../history/index.js';
import { LifecycleBus, type LifecycleSubscriber, type ApiCallFacts } from '../lifecycle/index.js';
import { dropSecrets, handlerSnapshot, HandlerSet, loadHandlerDir, selectHandlers, type Handler } from '../handler/index.js';
import { checkSchedulesFor, startSources } from '../sources/index.js';
import { rerunBurst } from '../clients/index.js';
import { rerunBodies, feedWindow, startRerunFeeder } from '../rerun/index.js';
import {
  createHandlerProcessor,
  eventsProcessor,
  handlerJobProcessor,
  parkedRunWaker,
  startWakeSweeper,
  RedisStepStore,
  stepResultsTtlMs,
  eventChecks,
  createFairPools,
  fairProcessor,
  type FairPools,
} from '../worker/index.js';
import { workerApiFactories } from './worker-api.js';
import { workerOptions } from './worker-options.js';
import { tracingObserver } from '../telemetry/index.js';
import { workerStarted } from './orphaned-runs.js';

export interface WorkerServiceOptions {
  config: Config;
  redisUrl: string;
  log: Logger;
  /**
   * The handler modules (fan-out creates a job for every subscriber, whoever
   * runs it), the ones this process runs (HANDLERS) and their parsed settings:
   * `new HandlerSet(handlerSnapshot(all, run, env))`. Replaceable while the
   * worker runs (`switchyard dev`).
   */
  set: HandlerSet;
  /** An observer of the worker's lifecycle stream besides history and tracing (the metrics'). */
  hooks?: LifecycleSubscriber | undefined;
  /** Overrides the API client's fetch (tests). */
  fetch?: typeof fetch;
  /** This process starts a new world for its API (a fresh sandbox, src/queue/world.ts): marked before any claim. */
  freshWorld?: string | undefined;
  /** The handler slots shared with the process's other workspaces (src/worker/fair.ts); absent: this worker's own. */
  pools?: FairPools | undefined;
}

export interface WorkerService {
  readonly name: 'worker';
  readonly events: Worker;
  /** One per priority, highest first. */
  readonly handlers: readonly Worker[];
  /** Backlog of the key lines of the handlers with `orderBy` (metrics). */
  orderBacklog(): Promise<OrderedBacklog[]>;
  /** The handler modules loaded now (all of them, as fan-out sees them): the ones the admin can re-run. */
  loaded(): readonly Handler[];
  close(graceMs: number): Promise<void>;
}

/**
 * Starts the worker side of one workspace on the shared Redis once the service has it (called once per
 * workspace served): that workspace's Config and logger, its queues, and the handler slots every workspace
 * of the process shares.
 */
export type StartWorkerPart = (ctx: {
  config: Config;
  log: Logger;
  redisUrl: string;
  queues: Queues;
  hooks: LifecycleSubscriber | undefined;
  pools: FairPools;
}) => Promise<WorkerService>;

/** The handlers a worker process runs, loaded before Redis, and how to start its BullMQ side. */
export interface PreparedWorker {
  /** Replaceable while the worker runs (`switchyard dev` reloads it). */
  readonly set: HandlerSet;
  readonly start: StartWorkerPart;
}

/**
 * The worker side of `start`, `work` and `dev`. Handler modules are loaded
 * now, before Redis is touched, so a broken module stops start-up at once even
 * during a Redis outage, and so does a bad or missing handler setting; the
 * BullMQ workers start when the service has Redis.
 */
export async function loadWorker(
  config: Config,
  log: Logger,
  env: Readonly<Record<string, string | undefined>>,
  extra: Pick<WorkerServiceOptions, 'freshWorld'> = {},
): Promise<PreparedWorker> {
  // Handler modules run in this process: from here on Switchyard's secrets live only in `config`.
  dropSecrets(process.env, secretVariables(config));
  const { handlers: all, schedules } = await loadHandlerDir(config.handlersDir);
  // A schedule naming a workspace the deployment does not serve stops start-up now, before Redis.
  checkSchedulesFor(
    config,
    schedules.map((s) => s.schedule),
  );
  if (all.length === 0 && schedules.length === 0)
    log.warn({ dir: config.handlersDir }, 'no handler modules found; deliveries are validated and kept, nothing runs');
  const run = config.handlers ? selectHandlers(all, config.handlers, config.handlersDir).map((l) => l.handler.id) : undefined;
  // Now, before Redis: a bad or missing setting of a handler this process runs stops start-up.
  const set = new HandlerSet(
    handlerSnapshot(
      all.map((l) => l.handler),
      run,
      env,
      schedules.map((s) => s.schedule),
    ),
  );
  return {
    set,
    start: ({ config: ws, log: wsLog, redisUrl, queues, hooks, pools }) =>
      startWorker({ config: ws, redisUrl, log: wsLog, hooks, set, pools, ...extra }, queues),
  };
}

/** {@link loadWorker}'s starter (`start` and `work`). */
export async function prepareWorker(
  config: Config,
  log: Logger,
  env: Readonly<Record<string, string | undefined>>,
): Promise<StartWorkerPart> {
  return (await loadWorker(config, log, env)).start;
}

/**
 * BullMQ workers on the shared Redis: `events` (validate and fan out) and one
 * per handler priority (`handlers-high`, `handlers`, `handlers-low`), each with
 * WORKER_CONCURRENCY slots of its own, so a high run never waits for a slot a
 * lower one holds. Many processes may run this at once; BullMQ's locks give
 * each job to one of them at a time, and the order lines and debounce bursts
 * live in Redis. What each worker does is src/worker's (fan-out.ts, processor.ts
 * and job-moves.ts, wake-sweeper.ts); this only builds and connects them.
 */
export async function startWorker(opts: WorkerServiceOptions, queues: Pick<Queues, 'handlers'>): Promise<WorkerService> {
  const { config, log, set } = opts;
  const prefix = config.queuePrefix;
  // Many jobs at once each send a script or a command on it (order lines, history, the limiter): auto-pipelined,
  // those of one event-loop turn go out in one write. The fan-out checks (change claims and waits) gather a tick's
  // deliveries into one script call themselves, and so do the pending fan-out clears (src/queue/flow-pending.ts):
  // those are sent at once, without a pipeline of their own and without waiting for the turn's end.
  const commands = createRedisConnection(opts.redisUrl, 'worker', 'switchyard-worker', {
    autoPipeline: true,
    unpipelined: [FAN_OUT_CHECK_SCRIPT],
  });
  /** The BullMQ workers' own connections, closed after them. */
  const owned = ownedConnections(opts.redisUrl, 'worker');
  commands.on('error', (err: Error) => log.debug({ err: err.message }, 'worker redis connection error'));
  const currentToken = tokenHash(config.workspaceApiToken);
  // Markers that a run finished or a delivery was folded are kept as long as deliveries are deduplicated.
  const keepMs = Math.max(config.dedupeTtlMs, 86_400_000);
  // Order lines, debounce bursts, the pending fan-out set, releases and onDead: src/queue/flow.ts.
  const flow = new FlowControl(commands, prefix, new BullFlowJobs(queues.handlers), { keepMs, log });
  if (opts.freshWorld && config.workspaceApiUrl) await markWorld(commands, prefix, config.workspaceApiUrl, opts.freshWorld);
  const world = new WorldMark(commands, prefix, config.workspaceApiUrl);
  const changes = new ChangeClaims(commands, prefix, config.dedupeTtlMs, world);
  const { lifecycle, history, api, rerunApi } = observedWorker(opts, commands);
  const { waits, records, steps, state, stepTtlMs } = durableStores(config, commands);
  const processJob = createHandlerProcessor({
    set,
    api,
    rerunApi,
    steps,
    log,
    lifecycle,
    flow,
    durable: { records, waits, state, keepMs: stepTtlMs, limits: { maxMs: config.dedupeTtlMs }, log },
    workspace: { id: config.workspaceId },
  });
  const waitPorts = { waits, wake: parkedRunWaker(queues.handlers), log };
  const stopSweeper = startWakeSweeper(waitPorts);

  await resumeIfTokenChanged(commands, queues.handlers, prefix, currentToken, log);

  const fanOutPorts = {
    flow,
    // The change claim and the waits an event answers: one script call per delivery.
    check: eventChecks({ ...waitPorts, checks: new FanOutChecks(commands, changes, waits), handlers: () => set.current().all }),
  };
  const eventsWorker = new Worker<StoredDelivery>(EVENTS_QUEUE, eventsProcessor({ set, flow, ports: fanOutPorts, lifecycle, log }), {
    connection: owned.connect('switchyard-events'),
    prefix,
    ...workerOptions(config),
  });
  const moves = { redis: commands, queues: queues.handlers, prefix, tokenHash: currentToken, waits, log };
  const handlerWorkers = PRIORITIES.map((priority) =>
    handlerWorker(opts, priority, handlerJobProcessor(priority, processJob, moves), owned.connect(`switchyard-handlers-${priority}`)),
  );

  const failed = listenFailures(eventsWorker, handlerWorkers, flow, set, log);
  // Timed sources (src/sources): polls, schedules and scheduled reconcile, one job scheduler wiring.
  const sources = await startSources({
    config,
    redisUrl: opts.redisUrl,
    log,
    set,
    commands,
    api,
    workerOptions: workerOptions(config),
    lifecycle,
    world,
  });
  const reruns = rerunFeeder(config, commands, queues.handlers.low, set, log);
  const stopWatching = [stopSweeper, workerStarted(set, config, commands, log)];

  return {
    name: 'worker',
    events: eventsWorker,
    handlers: handlerWorkers,
    orderBacklog: async () => orderBacklog(set, flow),
    loaded: () => set.current().all,
    close: async () => {
      for (const stop of stopWatching) stop();
      await reruns.stop();
      // Worker.close() waits for active jobs to finish; the caller bounds the wait.
      await Promise.allSettled([eventsWorker, ...handlerWorkers].map((w) => w.close()));
      await sources.close();
      await owned.close();
      // What the failed listeners started goes out before the connection closes (QUIT would pass it).
      await Promise.all(failed.map((f) => f.settled()));
      history?.flush();
      await closeRedis(commands);
    },
  };
}

/**
 * The BullMQ worker of one handler priority. In a deployment of many, a run starts only with a slot of that
 * priority's pool (src/worker/fair.ts), granted round-robin across the process's workspaces (by weight); a
 * deployment of one runs as BullMQ gives it work.
 */
function handlerWorker(
  opts: WorkerServiceOptions,
  priority: Priority,
  processor: ReturnType<typeof handlerJobProcessor>,
  connection: RedisClient,
): Worker<HandlerJobData> {
  const { config } = opts;
  // One workspace has nobody to share with: its BullMQ worker's concurrency already is the slot count, and the pool
  // (a slot, an async context per run) would only cost CPU on every delivery.
  const shared = (config.workspaces?.length ?? 1) > 1;
  const pools = opts.pools ?? createFairPools(config.workerConcurrency);
  const run = shared ? fairProcessor(pools, priority, { id: config.workspaceId, weight: config.workspaceWeight }, processor) : processor;
  return new Worker<HandlerJobData>(HANDLER_QUEUE_BY_PRIORITY[priority], run, {
    connection,
    prefix: config.queuePrefix,
    ...workerOptions(config),
  });
}

/**
 * The lifecycle stream (src/lifecycle): fan-out, each attempt, its steps and API calls. Its observers,
 * subscribed here only: metrics (opts.hooks), the delivery history (HISTORY) and tracing (a span per
 * fan-out and per handler attempt, the scope it runs in; one per API call). And the one API client
 * factory of the process (one shared limiter, one read cache: handler runs, schedule runs, polls), whose
 * calls no attempt made (the poller's) are reported to the stream too.
 */
function observedWorker(opts: WorkerServiceOptions, commands: RedisClient) {
  const { config, log } = opts;
  const history = historyObserver(config, commands, log);
  const lifecycle = new LifecycleBus()
    .subscribe(opts.hooks)
    .subscribe(history?.subscriber)
    .subscribe(tracingObserver(config.workspaceApiUrl ?? undefined));
  const apiObserver = lifecycle.wants('api-call')
    ? { onCall: (call: ApiCallFacts) => lifecycle.emit({ type: 'api-call', attempt: undefined, call }) }
    : {};
  const factories = workerApiFactories({ ...opts, ...apiObserver }, commands);
  return { lifecycle, history, api: factories?.live, rerunApi: factories?.rerun };
}

/**
 * Steps and durable sleeps and waits (src/worker/durable.ts): runs' records, the waits and their per-key
 * event logs (kept for lookbacks as long as steps are), ctx.state.
 */
function durableStores(config: Config, commands: RedisClient) {
  const prefix = config.queuePrefix;
  const stepTtlMs = Math.max(config.dedupeTtlMs, 7 * 86_400_000) + 86_400_000;
  return {
    stepTtlMs,
    // Step results stay readable as long as the history (HISTORY_TTL) for `rerun --from-step`.
    steps: new RedisStepStore(commands, prefix, stepResultsTtlMs({ dedupeTtlMs: config.dedupeTtlMs, historyTtlMs: config.history.ttlMs })),
    waits: new WaitStore(commands, prefix, stepTtlMs),
    records: new RunRecords(commands, prefix),
    state: new HandlerStateStore(commands, prefix),
  };
}

/**
 * Each worker's errors logged, and its jobs failed for good handed to flow control's part (the pending
 * fan-out set, a dead run's key) in src/queue/flow-adapter.ts; `settled()` of each listener before the
 * connection closes.
 */
function listenFailures(eventsWorker: Worker, handlerWorkers: readonly Worker[], flow: FlowControl, set: HandlerSet, log: Logger) {
  const handlerOf = (id: string) => set.current().all.find((h) => h.id === id);
  const failed = [flowFailedListener(flow, 'events', handlerOf, log), flowFailedListener(flow, 'handlers', handlerOf, log)] as const;
  for (const w of [eventsWorker, ...handlerWorkers]) {
    w.on('error', (err) => log.warn({ err: err.message, queue: w.name }, 'worker error'));
    w.on('failed', failed[w === eventsWorker ? 0 : 1].listener);
  }
  return failed;
}

/**
 * `switchyard rerun` batches (src/rerun): every worker feeds them into `handlers-low` (one worker at a time
 * per batch, by lease) and records how their runs ended.
 */
function rerunFeeder(config: Config, commands: RedisClient, low: Queue, set: HandlerSet, log: Logger) {
  const prefix = config.queuePrefix;
  return startRerunFeeder({
    redis: commands,
    prefix,
    queue: low,
    handlers: () => set.current().all,
    bodies: rerunBodies(commands, prefix),
    window: feedWindow(rerunBurst(config)),
    log,
  });
}

/** The backlog of the key lines of the handlers with `orderBy` (metrics). */
async function orderBacklog(set: HandlerSet, flow: FlowControl): Promise<OrderedBacklog[]> {
  const ordered = set
    .current()
    .all.filter((h) => h.flow.orderBy !== null)
    .map((h) => h.id);
  return Promise.all(ordered.map(async (handler) => ({ handler, ...(await flow.backlog(handler)) })));
}
