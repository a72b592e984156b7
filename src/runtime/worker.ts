import { DelayedError, Job, UnrecoverableError as BullmqUnrecoverableError, WaitingError, Worker } from 'bullmq';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import {
  deliveryBytes,
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
  pauseHandlers,
  pauseState,
  resumeHandlers,
  tokenHash,
  type HandlerQueues,
  type Queues,
  WaitStore,
  RunRecords,
  HandlerStateStore,
} from '../queue/index.js';
import { parseEnvelope } from '../events/index.js';
import type { OrderedBacklog } from '../metrics/index.js';
import { PRIORITIES } from '../util/index.js';
import { closeRedis, createRedisConnection, ownedConnections, type RedisClient } from '../redis/index.js';
import { historyObserver } from '../history/index.js';
import { LifecycleBus, type LifecycleSubscriber, type ApiCallFacts, type DeliveryFacts, type PlacedRun } from '../lifecycle/index.js';
import {
  dispatch,
  createHandlerProcessor,
  type HandlerJobDecision,
  type HandlerJobView,
  RedisStepStore,
  eventWaits,
  sweepWakes,
} from '../worker/index.js';
import { dropSecrets, handlerSnapshot, HandlerSet, loadHandlerDir, selectHandlers } from '../handler/index.js';
import { startSources } from '../sources/index.js';
import { workerApiFactory } from './worker-api.js';
import { workerOptions } from './worker-options.js';
import { tracingObserver } from '../telemetry/index.js';

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
}

export interface WorkerService {
  readonly name: 'worker';
  readonly events: Worker;
  /** One per priority, highest first. */
  readonly handlers: readonly Worker[];
  /** Backlog of the key lines of the handlers with `orderBy` (metrics). */
  orderBacklog(): Promise<OrderedBacklog[]>;
  close(graceMs: number): Promise<void>;
}

/** Starts the worker side of a process on the shared Redis once the service has it. */
export type StartWorkerPart = (ctx: { redisUrl: string; queues: Queues; hooks: LifecycleSubscriber | undefined }) => Promise<WorkerService>;

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
  dropSecrets(process.env);
  const { handlers: all, schedules } = await loadHandlerDir(config.handlersDir);
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
    start: ({ redisUrl, queues, hooks }) => startWorker({ config, redisUrl, log, hooks, set, ...extra }, queues),
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
 * live in Redis.
 */
export async function startWorker(opts: WorkerServiceOptions, queues: Pick<Queues, 'handlers'>): Promise<WorkerService> {
  const { config, log } = opts;
  const prefix = config.queuePrefix;
  const { set } = opts;
  // Many jobs at once each send a script or a command on it (change claims, order lines, history, the
  // limiter): auto-pipelined, those of one event-loop turn go out in one write.
  const commands = createRedisConnection(opts.redisUrl, 'worker', 'switchyard-worker', { autoPipeline: true });
  /** The BullMQ workers' own connections, closed after them. */
  const owned = ownedConnections(opts.redisUrl, 'worker');
  const connect = (name: string): RedisClient => owned.connect(name);
  commands.on('error', (err: Error) => log.debug({ err: err.message }, 'worker redis connection error'));
  const currentToken = tokenHash(config.workspaceApiToken);
  // Markers that a run finished or a delivery was folded are kept as long as deliveries are deduplicated.
  const keepMs = Math.max(config.dedupeTtlMs, 86_400_000);
  // Order lines, debounce bursts, the pending fan-out set, releases and onDead: src/queue/flow.ts.
  const flow = new FlowControl(commands, prefix, new BullFlowJobs(queues.handlers), { keepMs, log });
  if (opts.freshWorld && config.workspaceApiUrl) await markWorld(commands, prefix, config.workspaceApiUrl, opts.freshWorld);
  const world = new WorldMark(commands, prefix, config.workspaceApiUrl);
  const changes = new ChangeClaims(commands, prefix, config.dedupeTtlMs, world);
  // The lifecycle stream (src/lifecycle): fan-out, each attempt, its steps and API calls. Its observers,
  // subscribed here only: metrics (opts.hooks), the delivery history (HISTORY) and tracing (a span per
  // fan-out and per handler attempt, the scope it runs in; one per API call).
  const history = historyObserver(config, commands, log);
  const lifecycle = new LifecycleBus()
    .subscribe(opts.hooks)
    .subscribe(history?.subscriber)
    .subscribe(tracingObserver(config.workspaceApiUrl ?? undefined));
  /** A call no attempt made (the poller's) is reported to the stream too. */
  const apiObserver = lifecycle.wants('api-call')
    ? { onCall: (call: ApiCallFacts) => lifecycle.emit({ type: 'api-call', attempt: undefined, call }) }
    : {};
  // One API client factory per process (one shared limiter, one read cache): handler runs, schedule runs, polls.
  const api = workerApiFactory({ ...opts, ...apiObserver }, commands);
  // Durable sleeps and waits (src/worker/durable.ts): runs' records, the waits and their per-key event
  // logs (kept for lookbacks as long as steps are), ctx.state.
  const stepTtlMs = Math.max(config.dedupeTtlMs, 7 * 86_400_000) + 86_400_000;
  const waits = new WaitStore(commands, prefix, stepTtlMs);
  const records = new RunRecords(commands, prefix);
  const processJob = createHandlerProcessor({
    set,
    api,
    steps: new RedisStepStore(commands, prefix, stepTtlMs),
    log,
    lifecycle,
    flow,
    durable: {
      records,
      waits,
      state: new HandlerStateStore(commands, prefix),
      keepMs: stepTtlMs,
      limits: { maxMs: config.dedupeTtlMs },
      log,
    },
  });
  /** Promotes a parked run (`<queue>|<job id>`); one that is not parked (running, gone) is left alone. */
  const queueByName = new Map<string, HandlerQueues[keyof HandlerQueues]>(
    PRIORITIES.map((p) => [HANDLER_QUEUE_BY_PRIORITY[p], queues.handlers[p]] as const),
  );
  const wake = async (run: string): Promise<void> => {
    const at = run.indexOf('|');
    const queue = queueByName.get(run.slice(0, at));
    if (!queue) return;
    const job = await Job.fromId(queue, run.slice(at + 1));
    await job?.promote().catch(() => undefined);
  };
  const waitPorts = { waits, wake, log };
  // Wake-ups an event queued whose waker died before promoting: redone every second (after 5 s of grace).
  const sweeper = setInterval(() => {
    sweepWakes(waitPorts, Date.now()).catch((err: unknown) => log.debug({ err: String(err) }, 'wake sweep failed'));
  }, 1_000);
  sweeper.unref();

  await resumeIfTokenChanged(commands, queues.handlers, prefix, currentToken, log);

  const fanOutPorts = {
    flow,
    claimChange: changes.claim.bind(changes),
    waits: eventWaits({ ...waitPorts, handlers: () => set.current().all }),
  };
  /** Fan-out of one delivery, its body parsed once here (for dispatch and the lifecycle's observers). */
  const fanOut = async (job: Job<StoredDelivery>, delivery: DeliveryFacts | undefined) => {
    const all = set.current().all;
    // The text as stored is parsed as is (no round trip through the bytes).
    const envelope = parseEnvelope(delivery?.raw ?? deliveryBytes(job.data), job.data.body);
    let placed;
    try {
      // Off the pending fan-out set once fanned out or dead-lettered as invalid (retries exhausted: the 'failed' listener).
      placed = await flow.fanningOut(job.data.key, () => dispatch(job.data, all, fanOutPorts, envelope));
    } catch (err) {
      if (delivery) lifecycle.emit({ type: 'fanned-out', delivery, envelope, ok: false, error: err });
      throw err;
    }
    if (delivery) {
      const result = placed;
      const runs = result.handlers.map((id): PlacedRun => ({
        id,
        placement: result.placed[id] ?? 'queued',
        priority: all.find((h) => h.id === id)?.flow.priority ?? 'normal',
      }));
      lifecycle.emit({
        type: 'fanned-out',
        delivery,
        envelope,
        ok: true,
        runs,
        ...(result.duplicateChange !== undefined ? { duplicateChange: result.duplicateChange } : {}),
      });
    }
    if (placed.duplicateChange)
      log.info(
        { delivery: job.data.key, change: placed.duplicateChange },
        'duplicate change: another delivery of it was dispatched; no handler runs',
      );
    return placed;
  };
  const eventsWorker = new Worker<StoredDelivery>(
    EVENTS_QUEUE,
    async (job: Job<StoredDelivery>) => {
      if (!lifecycle.active) return fanOut(job, undefined);
      const delivery = deliveryFacts(job);
      return lifecycle.within({ type: 'received', delivery }, () => fanOut(job, delivery));
    },
    { connection: connect('switchyard-events'), prefix, ...workerOptions(config) },
  );

  /** Applies the processor's decision with BullMQ (the only place that knows its job-moving calls). */
  const apply = async (job: Job<HandlerJobData>, token: string | undefined, decision: HandlerJobDecision) => {
    switch (decision.kind) {
      case 'completed':
        return decision.result;
      case 'dead': {
        // Dead-lettered now, whatever BullMQ's count of attempts says; what the handler threw keeps its stack (`dlq show`).
        const dead = new BullmqUnrecoverableError(decision.reason);
        if (decision.error?.stack) dead.stack = `${dead.name}: ${decision.reason}\n  caused by ${decision.error.stack}`;
        throw dead;
      }
      case 'delay':
        await job.moveToDelayed(decision.until, token);
        throw new DelayedError();
      case 'pause': {
        const { reason, code, at } = decision;
        const first = await pauseHandlers(commands, queues.handlers, prefix, { reason, code, at, tokenHash: currentToken });
        if (first) log.error({ reason }, 'handler queues paused: every job is kept until they are resumed');
        await job.moveToWait(token);
        throw new WaitingError();
      }
      case 'retry':
        throw decision.error;
      case 'wait': {
        // Parked with BullMQ: delayed until due (BullMQ promotes it then; no waker of ours), no attempt spent,
        // no slot, no lock. An event that answered one of its waits after it registered and before this move
        // found the job active and could not promote it: re-read them now that it is delayed, and wake it.
        await job.moveToDelayed(decision.until, token);
        if (decision.waitIds.length > 0 && (await waits.states(decision.waitIds)).some((st) => st !== null && st.status !== 'pending')) {
          await job.promote().catch(() => undefined);
        }
        throw new DelayedError();
      }
    }
  };

  const handlerWorkers = PRIORITIES.map(
    (priority) =>
      new Worker<HandlerJobData>(
        HANDLER_QUEUE_BY_PRIORITY[priority],
        // Two parameters: BullMQ gives a processor that takes a third an AbortController per job, which nothing here
        // aborts (a run's ctx.signal fires on its timeout, made by the runner only for a handler that has one).
        async (job: Job<HandlerJobData>, token?: string) => {
          const view: HandlerJobView = {
            id: String(job.id),
            data: job.data,
            timestamp: job.timestamp,
            attemptsMade: job.attemptsMade,
            attempts: job.opts.attempts ?? 1,
            queue: HANDLER_QUEUE_BY_PRIORITY[priority],
            ...(job.attemptsMade === 0 && job.processedOn && !job.data.parked
              ? { waitMs: job.processedOn - job.timestamp - (job.opts.delay ?? 0) }
              : {}),
            markParked: async () => {
              await job.updateData({ ...job.data, parked: true });
            },
          };
          return apply(job, token, await processJob(view));
        },
        { connection: connect(`switchyard-handlers-${priority}`), prefix, ...workerOptions(config) },
      ),
  );

  // Jobs failed for good: flow control's part (the pending fan-out set, a dead run's key) in src/queue/flow-adapter.ts.
  const handlerOf = (id: string) => set.current().all.find((h) => h.id === id);
  const failed = [flowFailedListener(flow, 'events', handlerOf, log), flowFailedListener(flow, 'handlers', handlerOf, log)] as const;
  for (const w of [eventsWorker, ...handlerWorkers]) {
    w.on('error', (err) => log.warn({ err: err.message, queue: w.name }, 'worker error'));
    w.on('failed', failed[w === eventsWorker ? 0 : 1].listener);
  }
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
  log.info({ handlers: [...set.current().handlers.keys()], concurrency: config.workerConcurrency }, 'worker started');

  const orderedHandlers = () =>
    set
      .current()
      .all.filter((h) => h.flow.orderBy !== null)
      .map((h) => h.id);
  return {
    name: 'worker',
    events: eventsWorker,
    handlers: handlerWorkers,
    orderBacklog: async () => Promise.all(orderedHandlers().map(async (handler) => ({ handler, ...(await flow.backlog(handler)) }))),
    close: async () => {
      clearInterval(sweeper);
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

/** What the lifecycle says of an `events` job's delivery (its raw body decoded once). */
function deliveryFacts(job: Job<StoredDelivery>): DeliveryFacts {
  const d = job.data;
  return {
    key: d.key,
    name: d.name,
    receivedAt: d.receivedAt,
    queuedAt: job.timestamp,
    secretIndex: d.secretIndex,
    bytes: d.body !== undefined ? Buffer.byteLength(d.body) : Math.floor(((d.bodyBase64?.length ?? 0) * 3) / 4),
    source: d.source ?? 'webhook',
    traceparent: d.traceparent,
    raw: deliveryBytes(d),
    job: { queue: job.queueName, id: job.id, attempt: job.attemptsMade + 1 },
  };
}

async function resumeIfTokenChanged(
  redis: RedisClient,
  queue: HandlerQueues,
  prefix: string,
  current: string | null,
  log: Logger,
): Promise<void> {
  const paused = await pauseState(redis, prefix);
  if (paused && paused.tokenHash !== current && current !== null) {
    await resumeHandlers(redis, queue, prefix);
    log.warn({ was: paused.code }, 'handler queues were paused for an unusable API token; a different token is configured now, resuming');
  } else if (paused) {
    log.error(
      { reason: paused.reason, since: paused.at },
      'handler queues are paused; replace the API token and restart, or run `switchyard dlq resume`',
    );
  }
}
