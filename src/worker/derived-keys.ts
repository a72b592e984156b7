import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { IdempotencyContext, IdempotencyKeyGenerator } from '../api/index.js';

/** The step a piece of handler code runs in ('' outside any step). */
export const currentStep = new AsyncLocalStorage<string>();

/**
 * Idempotency-Keys derived from (delivery key, handler id, step, operation,
 * path, n-th such call): the same handler code on a retried job sends the same
 * keys in the same order, so the API replays the first response instead of
 * writing twice. Calls are counted per (step, op, path), so unrelated writes
 * running concurrently cannot swap keys; two concurrent writes to the same
 * path should each get their own `ctx.step`.
 */
export function deterministicKeys(deliveryKey: string, handlerId: string): IdempotencyKeyGenerator {
  const counters = new Map<string, number>();
  return (op: IdempotencyContext) => {
    const step = currentStep.getStore() ?? '';
    const slot = `${step}\u0000${op.op}\u0000${op.method}\u0000${op.path}`;
    const n = (counters.get(slot) ?? 0) + 1;
    counters.set(slot, n);
    const digest = createHash('sha256').update(`${deliveryKey}\u0000${handlerId}\u0000${slot}\u0000${n}`).digest('base64url');
    return `sy_${digest.slice(0, 40)}`;
  };
}
