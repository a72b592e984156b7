import type { Handler } from '../handler.js';
import type { Logger } from '../log.js';
import { classify, type Verdict } from './classify.js';
import { createContext, type ContextDeps } from './context.js';
import { eventOf, type HandlerJobData } from '../queue/jobs.js';

export type RunOutcome = { readonly ok: true; readonly ms: number } | { readonly ok: false; readonly ms: number; readonly verdict: Verdict; readonly error: unknown };

/**
 * Runs one handler on one delivery and classifies a failure. Knows nothing of
 * BullMQ, so `replay --inline` runs handlers exactly as the worker does.
 */
export async function runHandler(
  handler: Handler,
  job: HandlerJobData,
  deps: Omit<ContextDeps, 'handlerId' | 'log'> & { log: Logger },
): Promise<RunOutcome> {
  const started = performance.now();
  const log = deps.log.child({ delivery: job.key, event: job.event.name, handler: handler.id, attempt: deps.delivery.attempt });
  const ctx = createContext({ ...deps, log, handlerId: handler.id });
  try {
    await handler.handle(eventOf(job), ctx);
    const ms = performance.now() - started;
    log.info({ outcome: 'completed', ms: Math.round(ms) }, 'handler done');
    return { ok: true, ms };
  } catch (error) {
    const ms = performance.now() - started;
    const verdict = classify(error);
    const level = verdict.kind === 'retry' || verdict.kind === 'delay' ? 'warn' : 'error';
    log[level]({ outcome: verdict.kind, reason: verdict.reason, ms: Math.round(ms) }, 'handler failed');
    return { ok: false, ms, verdict, error };
  }
}
