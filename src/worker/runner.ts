import { type Handler, HandlerTimeoutError } from '../handler/index.js';
import type { Logger } from '../log/index.js';
import { classify, onAttempt, type Verdict } from './classify.js';
import { createContext, type ContextDeps } from './context.js';
import { fromStepPlan, type FromStep } from './from-step.js';
import { eventOf, type HandlerJobData } from '../queue/index.js';

export type RunOutcome =
  | { readonly ok: true; readonly ms: number }
  | { readonly ok: false; readonly ms: number; readonly verdict: Verdict; readonly error: unknown };

/**
 * Runs one handler on one delivery and classifies a failure (a retryable one
 * on the job's last attempt is dead: `deps.attempts`). Knows nothing of
 * BullMQ, so `replay --inline` runs handlers exactly as the worker does. A run
 * past the handler's `timeout` fails with HandlerTimeoutError (retryable), and
 * its `ctx.signal` is aborted with that error.
 */
export async function runHandler(
  handler: Handler,
  job: HandlerJobData,
  deps: Omit<ContextDeps, 'handlerId' | 'log'> & {
    log: Logger;
    /** Runs the job has in all (its handler's `retry.attempts`): on the last one a retryable failure is `dead` ({@link onAttempt}). */
    attempts?: number | undefined;
  },
): Promise<RunOutcome> {
  const started = performance.now();
  // The run's child logger, made on first use: a run that logs nothing (a quiet level, a handler that does
  // not read ctx.log) does not pay for its bindings.
  let child: Logger | undefined;
  const runLog = (): Logger =>
    (child ??= deps.log.child({ delivery: job.key, event: job.event.name, handler: handler.id, attempt: deps.delivery.attempt }));
  // The run's signal: the job's, and with a timeout, aborted by either (AbortSignal.any costs ~30 µs a call on Node 20).
  const timeout = handler.timeoutMs === null ? undefined : new AbortController();
  const unfollow = timeout === undefined || deps.signal === undefined ? undefined : follow(deps.signal, timeout);
  const signal = timeout === undefined ? deps.signal : timeout.signal;
  // A re-run from a step: checked before the handler runs (a FromStepError is dead-lettered, nothing run).
  let fromStep: FromStep | null = null;
  const ctx = createContext({
    ...deps,
    get log() {
      return runLog();
    },
    signal,
    handlerId: handler.id,
    rerun: job.rerun,
    get fromStep() {
      return fromStep;
    },
  });
  try {
    if (job.rerun?.fromStep !== undefined) fromStep = await fromStepPlan(deps.steps, job);
    await (timeout === undefined
      ? handler.handle(eventOf(job), ctx)
      : withTimeout(handler.handle(eventOf(job), ctx), handler, timeout, runLog));
    const ms = performance.now() - started;
    if (deps.durable?.parked) {
      // It asked to sleep or wait and swallowed the signal: parked all the same (its return is ignored).
      runLog().warn(
        { wait: deps.durable.parked.name },
        'handler returned normally after a sleep or wait parked it (it caught the park signal); parked anyway',
      );
      return { ok: true, ms };
    }
    if (deps.log.isLevelEnabled('info')) runLog().info({ outcome: 'completed', ms: Math.round(ms) }, 'handler done');
    return { ok: true, ms };
  } catch (error) {
    const ms = performance.now() - started;
    if (deps.durable?.parked) {
      if (deps.log.isLevelEnabled('debug'))
        runLog().debug({ wait: deps.durable.parked.name, ms: Math.round(ms) }, 'handler parked (sleep or wait)');
      return { ok: true, ms };
    }
    const verdict = onAttempt(classify(error), deps.delivery.attempt, deps.attempts);
    const level = verdict.kind === 'retry' || verdict.kind === 'delay' ? 'warn' : 'error';
    runLog()[level]({ outcome: verdict.kind, reason: verdict.reason, ms: Math.round(ms) }, 'handler failed');
    return { ok: false, ms, verdict, error };
  } finally {
    unfollow?.();
  }
}

/** Aborts `ctrl` when `signal` aborts (with its reason); returns the unsubscribe. */
function follow(signal: AbortSignal, ctrl: AbortController): () => void {
  if (signal.aborted) {
    ctrl.abort(signal.reason);
    return () => undefined;
  }
  const onAbort = () => ctrl.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/**
 * `run`, or a HandlerTimeoutError once the handler's timeout passes (aborting
 * `ctrl`). The run itself cannot be stopped from outside: how it ends later is
 * logged, never left as an unhandled rejection.
 */
async function withTimeout(run: Promise<void>, handler: Handler, ctrl: AbortController, log: () => Logger): Promise<void> {
  const ms = handler.timeoutMs;
  if (ms === null) return run;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new HandlerTimeoutError(handler.id, ms);
      ctrl.abort(error);
      reject(error);
    }, ms);
  });
  try {
    return await Promise.race([run, expired]);
  } finally {
    clearTimeout(timer);
    if (ctrl.signal.aborted) {
      run.then(
        () => log().warn({ timeoutMs: ms }, 'handler finished after its timeout; its run already failed'),
        (err: unknown) => log().debug({ err: err instanceof Error ? err.message : String(err) }, 'handler failed after its timeout'),
      );
    }
  }
}
