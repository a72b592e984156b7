import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { IdempotencyContext, IdempotencyKeyGenerator } from '../api/index.js';
import { jobIdFor } from '../events/index.js';
import { rerunJobId, type HandlerJobData } from '../queue/index.js';

/** The step a piece of handler code runs in ('' outside any step). */
export const currentStep = new AsyncLocalStorage<string>();

/**
 * Idempotency-Keys derived from (delivery key, handler id, step, operation,
 * path, n-th such call): the same handler code on a retried job sends the same
 * keys in the same order, so the API replays the first response instead of
 * writing twice. Calls are counted per (step, op, path), so unrelated writes
 * running concurrently cannot swap keys; two concurrent writes to the same
 * path should each get their own `ctx.step`. A re-run (`switchyard rerun`) adds its id: it writes again, while
 * a retry of the re-run sends the re-run's keys again.
 */
export function deterministicKeys(deliveryKey: string, handlerId: string, rerunId?: string): IdempotencyKeyGenerator {
  const run = rerunId === undefined ? '' : `\u0000rerun\u0000${rerunId}`;
  const counters = new Map<string, number>();
  return (op: IdempotencyContext) => {
    const step = currentStep.getStore() ?? '';
    const slot = `${step}\u0000${op.op}\u0000${op.method}\u0000${op.path}`;
    const n = (counters.get(slot) ?? 0) + 1;
    counters.set(slot, n);
    const digest = createHash('sha256').update(`${deliveryKey}\u0000${handlerId}${run}\u0000${slot}\u0000${n}`).digest('base64url');
    return `sy_${digest.slice(0, 40)}`;
  };
}

/**
 * The scope of one run: where its `ctx.step` results and durable record live. A delivery's run: its job id as fan-out
 * made it (`d/<key>/<handler>`); a re-run: its own (`r/<key>/<handler>/<rerun id>`), the same on each of its attempts.
 */
export function runScope(data: Pick<HandlerJobData, 'key' | 'rerun'>, handlerId: string): string {
  return data.rerun ? rerunJobId(data.key, handlerId, data.rerun.id) : jobIdFor(data.key, handlerId);
}
