import type { MiddlewareHandler } from 'hono';
import type { Ctx, SandboxEnv } from '../context.js';
import { ApiError } from '../errors.js';
import type { SandboxState } from '../state.js';
import { sleep } from '../../util/index.js';

/**
 * Evaluates the `/_sandbox/faults` rules for the call (before authentication,
 * so a forced `token_expired` can replace the token check) and answers a
 * forced 500 straight away. Forced 429s are answered by the rate gate, added
 * latency by {@link faultDelay} inside each route's guard.
 */
export function faultGate(state: SandboxState, apiPath: (p: string) => string): MiddlewareHandler<SandboxEnv> {
  return async (c, next) => {
    const effect = state.faults.evaluate(c.req.method, apiPath(c.req.path));
    c.set('faults', effect);
    if (effect.fail500) throw new ApiError(500, 'Server Error');
    if (effect.planLimit) throw new ApiError(402, 'A plan allowance is spent.', 'plan_limit');
    await next();
  };
}

/**
 * Sleeps the fault's latency. Called by a route's guard after the idempotency
 * gate, so a slow call holds its key in flight and a concurrent retry sees the 409.
 */
export async function faultDelay(c: Ctx): Promise<void> {
  const ms = c.get('faults')?.latencyMs ?? 0;
  if (ms > 0) await sleep(ms);
}
