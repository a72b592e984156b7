import type { MiddlewareHandler } from 'hono';
import { HEADERS } from '../../spec/index.js';
import type { SandboxEnv } from '../context.js';
import { ApiError } from '../errors.js';
import { type BurstResult, type QuotaResult } from '../rate-limit.js';
import type { SandboxState } from '../state.js';
import { tokenHash } from '../tokens.js';

/**
 * Spec, Limits: the burst is counted per token (its size is the plan of the
 * token's workspace, see SandboxState.burstOf), the monthly allowance per
 * workspace; exceeding either answers 429 with `Retry-After` in seconds (for
 * the allowance: until the start of next month). A fault rule may force a 429.
 */
export function rateLimit(state: SandboxState): MiddlewareHandler<SandboxEnv> {
  return async (c, next) => {
    const auth = c.get('auth');
    const now = state.now();
    const key = tokenHash(auth.token.value);
    // Refused requests do not count: the burst is only looked at until every check has passed.
    const limit = state.burstOf(auth.workspace.id);
    const burst = state.burst.peek(key, now, limit);
    c.set('burst', burst);
    if (!burst.allowed) {
      throw new ApiError(429, 'Too many requests.', 'rate_limited', undefined, { [HEADERS.retryAfter]: String(burst.retryAfter) });
    }
    if (c.get('faults')?.force429) {
      throw new ApiError(429, 'Too many requests.', 'rate_limited', undefined, { [HEADERS.retryAfter]: '1' });
    }
    const quota = state.quota.take(auth.workspace.id, now);
    c.set('quota', quota);
    if (quota && !quota.allowed) {
      const retry = Math.max(1, Math.ceil((quota.resetAt - now) / 1000));
      throw new ApiError(429, 'The monthly API allowance is spent.', 'quota_exceeded', undefined, { [HEADERS.retryAfter]: String(retry) });
    }
    c.set('burst', state.burst.take(key, now, limit));
    await next();
  };
}

/** Headers every API answer carries (spec: rate-limit headers on every response). */
export function limitHeaders(
  burst: BurstResult | undefined,
  quota: QuotaResult | null | undefined,
  defaultBurst: number,
): Record<string, string> {
  const headers: Record<string, string> = {
    [HEADERS.rateLimitLimit]: String(burst?.limit ?? defaultBurst),
    [HEADERS.rateLimitRemaining]: String(burst?.remaining ?? defaultBurst),
  };
  if (quota) {
    headers[HEADERS.quotaLimit] = String(quota.limit);
    headers[HEADERS.quotaRemaining] = String(quota.remaining);
    headers[HEADERS.quotaReset] = new Date(quota.resetAt).toISOString();
  }
  return headers;
}
