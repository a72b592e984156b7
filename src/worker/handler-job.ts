import type { Logger } from '../log/index.js';
import type { HandlerJobData, FlowControl } from '../queue/index.js';
import type { HandlerSet, HandlerWorkspace } from '../handler/index.js';
import type { LifecycleBus, AttemptDecision } from '../lifecycle/index.js';
import type { ContextDeps } from './context.js';
import type { DurableDeps } from './durable.js';

/**
 * A `handlers` job as the processor (./processor.ts) reads it, what becomes of
 * it, and what the processor is given: shared by its steps, the flow checks
 * (./flow-checks.ts) and the settling of a run's outcome (./settle.ts).
 */

/** The part of a `handlers` job the processor reads (a BullMQ Job has all of it). */
export interface HandlerJobView {
  /** The job id (part of the order and debounce bookkeeping). */
  readonly id: string;
  readonly data: HandlerJobData;
  /** Runs in all before the job is dead-lettered (its handler's `retry.attempts`). */
  readonly attempts: number;
  /** When the job was created (ms since epoch). */
  readonly timestamp: number;
  /** Attempts already spent before this one. */
  readonly attemptsMade: number;
  /** The queue it runs from (the lifecycle's attempt names it); default `handlers`. */
  readonly queue?: string;
  /** Its first run: how long it waited in its queue since it could run (ms). */
  readonly waitMs?: number;
  /** Marks the job's data `parked` (before its first park), so its later attempts load the run's record. */
  readonly markParked?: () => Promise<void>;
}

/**
 * What becomes of one `handlers` job; the queue adapter (src/worker/job-moves.ts)
 * applies it with BullMQ. `delay` spends no attempt (a 429, a quota, or a job
 * handed back to a process that runs its handler); `retry` spends one and is
 * never the last attempt's decision: a retryable failure with no attempt left
 * is `dead` (the runner's verdict: `onAttempt` in classify.ts), so the queue adapter,
 * the history, the log and the metrics never need BullMQ's own count.
 */
export type HandlerJobDecision = AttemptDecision<SkipReason>;

/** Why a run was completed without running its handler. */
export type SkipReason = 'max_age' | 'stale' | 'already_completed' | 'burst_gone';

/**
 * What a run asks of flow control (src/queue/flow.ts): its turn in its key's line, its burst, its release, its death; a
 * due run, the oldest delivery not fanned out yet.
 */
export type FlowPorts = Pick<FlowControl, 'claim' | 'release' | 'take' | 'finish' | 'onDead'> & Partial<Pick<FlowControl, 'oldestPending'>>;

export interface HandlerProcessorDeps {
  /**
   * The handlers this process runs and their settings; replaceable while it runs (`switchyard dev`): each job reads the
   * current version once.
   */
  readonly set: Pick<HandlerSet, 'current'>;
  readonly api: ContextDeps['api'];
  /** The clients of re-runs (a job with `rerun`): within the re-runs' own share of the API budget (RERUN_SHARE); default `api`. */
  readonly rerunApi?: ContextDeps['api'];
  readonly steps: ContextDeps['steps'];
  readonly log: Logger;
  /** The lifecycle stream: each attempt, its steps and API calls (metrics, history, tracing subscribe). */
  readonly lifecycle?: LifecycleBus | undefined;
  /** Needed by handlers with `orderBy` or `debounce` (their jobs carry `order` / `debounce`). */
  readonly flow?: FlowPorts | undefined;
  /** The clock (ms since epoch). */
  readonly now?: () => number;
  /** Jitter source in [0, 1). */
  readonly random?: () => number;
  /** Waits (the hold of an ordered run); default setTimeout. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Durable sleeps, waits, cancelOn and ctx.state (src/worker/durable.ts); absent: those calls throw. */
  readonly durable?: Omit<DurableDeps, 'now'> | undefined;
  /** The workspace the runs belong to (`ctx.workspace`); default `default` (DEFAULT_WORKSPACE, src/config). */
  readonly workspace?: { readonly id: string } | undefined;
}

/** What every run of one processor shares: its deps, with the clock, jitter and pause defaulted, and the handlers it warned of. */
export interface Processing {
  readonly deps: HandlerProcessorDeps;
  readonly now: () => number;
  readonly random: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Handlers this process does not run whose jobs it already warned about (once each). */
  readonly unclaimedWarned: Set<string>;
  /** `deps.durable` with the clock, built once for every run's DurableRun (undefined without durable deps). */
  readonly durableDeps?: DurableDeps | undefined;
  /** `ctx.workspace` of every run (from `deps.workspace`), made once. */
  readonly workspace: HandlerWorkspace;
}
