import { createApiClient, type ApiClient } from '../../api/client.js';
import type { CallEvent } from '../../api/transport.js';
import type { LimiterPriority, RateLimiter } from '../../api/rate-limiter.js';
import { createRedisRateLimiter } from '../../api/rate-limiter-redis.js';
import type { Config } from '../../config/config.js';
import type { RedisClient } from '../../redis/connection.js';

/** Per-request timeout of reconcile's client (as the handlers' client). */
const TIMEOUT_MS = 30_000;

/**
 * A limiter that takes a slot of `budget` (reconcile's own window) before a
 * slot of `shared` (the window every worker uses), and gives both back when
 * the call is done. `budgetPriority` orders waiters inside the budget window.
 * The service's headers are the token's, not reconcile's: they adjust only the
 * shared limiter.
 */
export function budgetedLimiter(shared: RateLimiter, budget: RateLimiter, budgetPriority: LimiterPriority = 'low'): RateLimiter {
  return {
    async acquire(signal, priority) {
      const b = await budget.acquire(signal, budgetPriority);
      try {
        const s = await shared.acquire(signal, priority);
        return { waitedMs: b.waitedMs + s.waitedMs, acquiredAtMs: s.acquiredAtMs, done: async () => { await Promise.all([s.done(), b.done()]); } };
      } catch (err) {
        await b.done();
        throw err;
      }
    },
    observe: (o) => shared.observe(o),
    pause: (ms) => shared.pause(ms),
    exhaustQuota: (at) => shared.exhaustQuota(at),
  };
}

/** Calls reconcile may make per 10 s: RECONCILE_BUDGET of WORKSPACE_API_BURST, at least 1. */
export function reconcileBurst(config: Pick<Config, 'workspaceApiBurst' | 'reconcile'>): number {
  return Math.max(1, Math.floor(config.workspaceApiBurst * config.reconcile.budget));
}

/**
 * The limiter of catch-up work, given the shared one: reconcile's listings and
 * the handler runs of the deliveries it synthesized take a slot of one window,
 * `<QUEUE_PREFIX>:reconcile-rate:`, of reconcileBurst() calls per 10 s, before
 * the shared slot. So everything reconcile causes stays within RECONCILE_BUDGET
 * and live traffic keeps the rest of the burst: priority alone orders waiters
 * but reserves nothing (low work that filled the window makes high work wait
 * for it to slide).
 */
export function catchUpLimiter(
  config: Pick<Config, 'workspaceApiBurst' | 'reconcile' | 'workspaceApiToken' | 'queuePrefix'>, redis: RedisClient, shared: RateLimiter, budgetPriority: LimiterPriority = 'low',
): RateLimiter {
  const own = createRedisRateLimiter({ redis, token: config.workspaceApiToken ?? '', burst: reconcileBurst(config), prefix: `${config.queuePrefix}:reconcile-rate:`, inflightMs: TIMEOUT_MS });
  return budgetedLimiter(shared, own, budgetPriority);
}

/**
 * Reconcile's API client: priority `low` at the shared limiter (the one the
 * workers use, `<QUEUE_PREFIX>:api-rate:`), and at most reconcileBurst() calls
 * per 10 s in its own window (`<QUEUE_PREFIX>:reconcile-rate:`), so live
 * traffic keeps the rest of the burst. Inside that window its listings go
 * before the handler runs they caused (few calls, and the report waits on
 * them). Null when no API is configured.
 */
export function reconcileClient(config: Config, redis: RedisClient, onCall?: (c: CallEvent) => void): ApiClient | null {
  const { workspaceApiUrl: baseUrl, workspaceApiToken: token, workspaceApiBurst: burst, queuePrefix } = config;
  if (!baseUrl || !token) return null;
  const shared = createRedisRateLimiter({ redis, token, burst, prefix: `${queuePrefix}:api-rate:`, inflightMs: TIMEOUT_MS });
  return createApiClient({
    baseUrl, token, burst, priority: 'low', timeoutMs: TIMEOUT_MS, rateLimiter: catchUpLimiter(config, redis, shared, 'high'),
    ...(onCall ? { onCall } : {}),
  });
}
