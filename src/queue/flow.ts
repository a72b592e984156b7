import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/index.js';
import { DebounceBursts, type Burst } from './debounce.js';
import { deadRunAction, type DeadPolicy } from './flow-dead.js';
import { oldestPendingFanOut, PendingFanOutClears } from './flow-pending.js';
import type { DebounceRef, HandlerJobData, OrderRef } from './jobs.js';
import { OrderGate, type AddJob, type OrderClaim, type QueuedJob } from './order.js';

/**
 * Flow control, owned here: a fan-out's jobs (plain ones added, ordered ones
 * put in their key's line, debounced ones folded into their key's burst), the
 * pending fan-out set, a run's claim of its turn, its release, the decision a
 * dead run makes for its key (onDead), and a dead run purged. Every hand-over
 * of a key to its next run goes through one {@link FlowJobs.handOver}; the
 * lines and bursts are in Redis (order.ts, debounce.ts), the jobs in BullMQ
 * (flow-adapter.ts). The worker (src/worker/) takes it through narrow ports;
 * src/runtime/ constructs it, and so do the dead-letter tools (dlq.ts).
 */

/** The handler queues, as flow control uses them (src/queue/flow-adapter.ts with BullMQ). */
export interface FlowJobs {
  /** Adds jobs to the handler queue of each one's priority (a job id that exists adds nothing). */
  add(jobs: readonly QueuedJob[]): Promise<void>;
  /**
   * A run became the head of its key's line: add its job, or, when `parked` (its job exists,
   * waiting parked, delayed), promote it; a parked job that is gone is added.
   */
  handOver(job: QueuedJob, parked: boolean): Promise<void>;
  /** Whether an error fails its job for good at once (a fan-out that is dead-lettered without retries). */
  failsForGood(err: unknown): boolean;
}

export interface FlowControlOptions {
  /** How long a finished run's marker and a delivery's fold marker are kept (the dedupe window). */
  readonly keepMs: number;
  /** The longest an ordered run waits for a delivery received before it that is still to be fanned out (OrderGate). */
  readonly holdMs?: number;
  readonly log?: Logger;
}

/** A handler run as flow control sees it: its job id and data. */
export interface FlowRun {
  readonly id: string;
  readonly data: HandlerJobData;
}

export class FlowControl {
  readonly #jobs: FlowJobs;
  readonly #order: OrderGate;
  readonly #debounce: DebounceBursts;
  readonly #log: Logger | undefined;
  readonly #clears: PendingFanOutClears;
  readonly #redis: RedisClient;
  readonly #prefix: string;
  /** The one way a key's line hands over to its next run. */
  readonly #handOver: AddJob = (job, parked = false) => this.#jobs.handOver(job, parked);

  constructor(redis: RedisClient, prefix: string, jobs: FlowJobs, opts: FlowControlOptions) {
    this.#jobs = jobs;
    this.#order = new OrderGate(redis, prefix, { doneTtlMs: opts.keepMs, ...(opts.holdMs === undefined ? {} : { holdMs: opts.holdMs }) });
    this.#debounce = new DebounceBursts(redis, prefix, opts.keepMs);
    this.#log = opts.log;
    this.#clears = new PendingFanOutClears(redis, prefix);
    this.#redis = redis;
    this.#prefix = prefix;
  }

  // ── fan-out ──

  /** Adds a fan-out's jobs that run now (plain runs, heads of lines, new bursts). */
  addJobs(jobs: readonly QueuedJob[]): Promise<void> {
    return this.#jobs.add(jobs);
  }

  /** Puts an ordered run in its key's line: `add` its job now (it is the head), it `wait`s, or it is `done` (a repeated fan-out). */
  enqueue(job: QueuedJob, ref: OrderRef): Promise<'add' | 'wait' | 'done'> {
    return this.#order.enqueue(job, ref);
  }

  /** Folds a debounced run into its key's burst (DebounceBursts.add). */
  fold(...args: Parameters<DebounceBursts['add']>): ReturnType<DebounceBursts['add']> {
    return this.#debounce.add(...args);
  }

  /**
   * Runs the fan-out of a delivery and takes it off the pending fan-out set
   * once it is done, or once it fails for good (ordered runs received after it
   * need not wait for it). A fan-out to be retried stays pending.
   */
  async fanningOut<T>(deliveryKey: string, fanOut: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await fanOut();
    } catch (err) {
      if (this.#jobs.failsForGood(err)) await this.fannedOut(deliveryKey);
      throw err;
    }
    await this.fannedOut(deliveryKey);
    return result;
  }

  /** Takes a delivery off the pending fan-out set (fanned out, or dead-lettered). */
  async fannedOut(deliveryKey: string): Promise<void> {
    await this.#clears.clear(deliveryKey).catch((e: unknown) => this.#log?.debug({ err: String(e) }, 'could not clear a pending fan-out'));
  }

  /**
   * The delivery accepted first among those not fanned out yet (its key and receipt ms), or null: a durable
   * run due at or after that receipt holds, since the delivery may answer its wait or cancel it (src/worker/hold.ts).
   */
  oldestPending(): Promise<{ key: string; at: number } | null> {
    return oldestPendingFanOut(this.#redis, this.#prefix);
  }

  // ── a run ──

  /** As an ordered run starts: run, park, hold, or complete it (OrderGate.claim); a key that moves on hands over to its next run. */
  claim(data: HandlerJobData & { order: OrderRef }, jobId: string): Promise<OrderClaim> {
    return this.#order.claim(data, jobId, this.#handOver);
  }

  /** An ordered run is over (`completed`, `skipped`, or dead and `released`): its key hands over to the next run. */
  release(data: HandlerJobData & { order: OrderRef }, jobId: string, outcome: 'completed' | 'skipped' | 'released'): Promise<void> {
    return this.#order.release(data, jobId, outcome, this.#handOver);
  }

  /** As a debounced run starts: take its burst (DebounceBursts.take). */
  take(
    handlerId: string,
    ref: DebounceRef,
    jobId: string,
  ): Promise<{ kind: 'run'; burst: Burst } | { kind: 'wait'; ms: number } | { kind: 'gone' }> {
    return this.#debounce.take(handlerId, ref, jobId);
  }

  /** The run of a taken burst completed. */
  finish(handlerId: string, ref: DebounceRef, jobId: string): Promise<void> {
    return this.#debounce.finish(handlerId, ref, jobId);
  }

  /**
   * A run is dead for good: its key's line is released or held as its handler
   * says ({@link deadRunAction}). Called by whoever saw it die: the processor
   * (its `dead` decision) and the worker's `failed` listener (a run BullMQ
   * failed without the processor: stalled too often). Releasing twice is
   * harmless: the second finds its key moved on.
   */
  async onDead(run: FlowRun, handler: DeadPolicy | undefined): Promise<'release' | 'hold' | 'none'> {
    const action = deadRunAction(run.data, handler);
    if (action === 'release' && run.data.order) await this.release({ ...run.data, order: run.data.order }, run.id, 'released');
    return action;
  }

  /**
   * A dead run was deleted (`dlq purge`): it gives up its place, so when it
   * held its key (`onDead: 'block'`) the next run starts now, promoted if it
   * waits parked.
   */
  async purged(run: FlowRun): Promise<void> {
    if (run.data.order && run.data.handlerId) await this.release({ ...run.data, order: run.data.order }, run.id, 'released');
  }

  /** Backlog of one ordered handler's lines (metrics). */
  backlog(handlerId: string): Promise<{ keys: number; pending: number; longest: number }> {
    return this.#order.backlog(handlerId);
  }
}
