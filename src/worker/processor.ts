import type { Logger } from '../log.js';
import type { HandlerJobData } from '../queue/jobs.js';
import type { ContextDeps } from './context.js';
import type { HandlerSet } from './handler-set.js';
import type { WorkerHooks } from './hooks.js';
import { runHandler } from './runner.js';

/** The part of a `handlers` job the processor reads (a BullMQ Job has all of it). */
export interface HandlerJobView {
  readonly data: HandlerJobData;
  /** When the job was created (ms since epoch). */
  readonly timestamp: number;
  /** Attempts already spent before this one. */
  readonly attemptsMade: number;
}

/**
 * What becomes of one `handlers` job; the queue adapter (src/runtime/worker.ts)
 * applies it with BullMQ. `delay` spends no attempt (a 429, a quota, or a job
 * handed back to a process that runs its handler); `retry` spends one.
 */
export type HandlerJobDecision =
  | { readonly kind: 'completed'; readonly result: { readonly ms: number } }
  | { readonly kind: 'dead'; readonly reason: string }
  | { readonly kind: 'delay'; readonly until: number }
  | { readonly kind: 'pause'; readonly reason: string; readonly code: string; readonly at: string }
  | { readonly kind: 'retry'; readonly error: Error };

export interface HandlerProcessorDeps {
  /** The handlers this process runs and their settings; replaceable while it runs (`switchyard dev`): each job reads the current version once. */
  readonly set: Pick<HandlerSet, 'current'>;
  readonly api: ContextDeps['api'];
  readonly steps: ContextDeps['steps'];
  readonly log: Logger;
  readonly hooks?: WorkerHooks | undefined;
  /** The clock (ms since epoch). */
  readonly now?: () => number;
  /** Jitter source in [0, 1). */
  readonly random?: () => number;
}

/** How long a handler job may wait for a worker that runs its handler before it is dead-lettered. */
export const UNCLAIMED_MS = 60 * 60_000;

/**
 * The `handlers` job processor as a plain function: runs the job's handler
 * (or hands the job back when this process does not run it) and decides what
 * becomes of the job. Knows nothing of BullMQ, so it is tested without it.
 */
export function createHandlerProcessor(deps: HandlerProcessorDeps): (job: HandlerJobView, signal?: AbortSignal) => Promise<HandlerJobDecision> {
  const now = deps.now ?? Date.now;
  const random = deps.random ?? Math.random;
  const unclaimedWarned = new Set<string>();

  return async (job, signal) => {
    // One version per job: a reload while it runs does not change what it runs with.
    const version = deps.set.current();
    const handler = version.handlers.get(job.data.handlerId);
    if (!handler) {
      // Run by another process (HANDLERS narrows this one): put it back for a worker that has it,
      // and dead-letter it with the reason once nobody has claimed it for UNCLAIMED_MS.
      const age = now() - job.timestamp;
      if (age > UNCLAIMED_MS) {
        return { kind: 'dead', reason: `no worker runs handler "${job.data.handlerId}" (narrowed out by HANDLERS everywhere, or its module was removed)` };
      }
      if (!unclaimedWarned.has(job.data.handlerId)) {
        unclaimedWarned.add(job.data.handlerId);
        deps.log.warn({ handler: job.data.handlerId }, 'a job for a handler this process does not run; leaving it to a worker that does');
      }
      // Short at first and jittered (pools running different subsets hand such jobs back and forth until the
      // right one takes it), growing with the job's age to at most 5 s so an unclaimed job does not churn Redis.
      return { kind: 'delay', until: now() + Math.min(5_000, 100 + age / 20) + Math.floor(random() * 200) };
    }
    const outcome = await runHandler(handler, job.data, {
      api: deps.api,
      steps: deps.steps,
      log: deps.log,
      settings: version.settings.get(handler.id) ?? {},
      signal: signal ?? new AbortController().signal,
      delivery: { key: job.data.key, receivedAt: job.data.receivedAt, attempt: job.attemptsMade + 1 },
    });
    deps.hooks?.onHandler?.({ handler: handler.id, event: job.data.event.name, outcome: outcome.ok ? 'completed' : outcome.verdict.kind, ms: outcome.ms });
    if (outcome.ok) return { kind: 'completed', result: { ms: Math.round(outcome.ms) } };
    const { verdict } = outcome;
    switch (verdict.kind) {
      case 'dead':
        return { kind: 'dead', reason: verdict.reason };
      case 'delay':
        // 429 and quota: wait without spending an attempt (the shared limiter decides when).
        return { kind: 'delay', until: now() + verdict.ms };
      case 'pause':
        return { kind: 'pause', reason: verdict.reason, code: verdict.code, at: new Date(now()).toISOString() };
      case 'retry':
        return { kind: 'retry', error: outcome.error instanceof Error ? outcome.error : new Error(verdict.reason) };
    }
  };
}
