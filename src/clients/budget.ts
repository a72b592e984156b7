/**
 * The catch-up budget (RECONCILE_BUDGET): reconcile's listings and the handler
 * runs of the deliveries it synthesized share one window of their own before
 * the shared one, so live traffic keeps the rest of the burst. Used by the one
 * client builder, src/clients/api-clients.ts.
 * @module
 */
import { type LimiterPriority, type RateLimiter, createRedisRateLimiter } from '../api/index.js';
import type { Config } from '../config/index.js';
import type { RedisClient } from '../redis/index.js';

/** The longest a call's slot counts as in flight: the clients' request timeout (src/clients/api-clients.ts). */
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
        return {
          waitedMs: b.waitedMs + s.waitedMs,
          acquiredAtMs: s.acquiredAtMs,
          done: async () => {
            await Promise.all([s.done(), b.done()]);
          },
        };
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

/** Calls the runs of `switchyard rerun` batches may make per 10 s: RERUN_SHARE of WORKSPACE_API_BURST, at least 1. */
export function rerunBurst(config: Pick<Config, 'workspaceApiBurst' | 'rerun'>): number {
  return Math.max(1, Math.floor(config.workspaceApiBurst * config.rerun.share));
}

/** The two budget windows of their own: reconcile's (RECONCILE_BUDGET) and the re-runs' (RERUN_SHARE). */
export type BudgetWindow = 'reconcile' | 'rerun';

/**
 * The limiter of catch-up work, given the shared one: reconcile's listings and
 * the handler runs of the deliveries it synthesized take a slot of one window,
 * `<QUEUE_PREFIX>:reconcile-rate:`, of reconcileBurst() calls per 10 s, before
 * the shared slot. So everything reconcile causes stays within RECONCILE_BUDGET
 * and live traffic keeps the rest of the burst: priority alone orders waiters
 * but reserves nothing (low work that filled the window makes high work wait
 * for it to slide). The runs of `switchyard rerun` batches do the same in a
 * window of their own (`window: 'rerun'`, `<QUEUE_PREFIX>:rerun-rate:`, of
 * rerunBurst() calls per 10 s).
 */
export function catchUpLimiter(
  own: { redis: RedisClient; token: string; prefix: string; burst: number; window?: BudgetWindow },
  shared: RateLimiter,
  budgetPriority: LimiterPriority = 'low',
): RateLimiter {
  const window = createRedisRateLimiter({
    redis: own.redis,
    token: own.token,
    burst: own.burst,
    prefix: `${own.prefix}:${own.window ?? 'reconcile'}-rate:`,
    inflightMs: TIMEOUT_MS,
  });
  return budgetedLimiter(shared, window, budgetPriority);
}
