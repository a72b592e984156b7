import { createApiClient, type ApiClient } from '../api/client.js';
import type { IdempotencyKeyGenerator } from '../api/idempotency.js';
import type { CallEvent } from '../api/transport.js';
import type { LimiterPriority } from '../api/rate-limiter.js';
import { createRedisRateLimiter } from '../api/rate-limiter-redis.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import { catchUpLimiter } from '../sources/reconcile/budget.js';
import type { RedisClient } from '../redis/connection.js';
import { ReadCache } from '../worker/read-cache.js';

/** Per-request timeout of the handlers' API client (also the longest a call's rate-limit slot counts as in flight). */
export const API_TIMEOUT_MS = 30_000;

/**
 * The API client factory of a worker process: one shared Redis rate limiter and
 * one read cache, a client per run with that run's Idempotency-Key generator
 * and priority (its calls take API slots in priority order across processes).
 * Undefined when no API is configured (a handler that calls it is dead-lettered
 * with that reason).
 */
export function workerApiFactory(
  opts: {
    config: Config; log: Logger; fetch?: typeof fetch | undefined;
    /** Reports every call's attempts of a client built without an `onCall` of its own (the lifecycle's `api-call`, the poller's). */
    onCall?: ((e: CallEvent) => void) | undefined;
  },
  redis: RedisClient,
): ((keys: IdempotencyKeyGenerator, priority: LimiterPriority, source?: string, onCall?: (e: CallEvent) => void) => ApiClient) | undefined {
  const { config } = opts;
  if (!config.workspaceApiUrl || !config.workspaceApiToken) {
    opts.log.warn(`${apiUnset(config)}: handlers that call the API will be dead-lettered with that reason`);
    return undefined;
  }
  const { workspaceApiUrl: baseUrl, workspaceApiToken: token, workspaceApiBurst: burst, queuePrefix } = config;
  // One limiter and one read cache per process, shared by every handler run. A call's
  // slot counts as in flight for at most the request timeout: a killed process never marks
  // its calls done, so when they filled the window, the limiter's 60 s default kept every
  // worker waiting 70 s after the kill.
  // Below high, grants are paced once the window is a tenth full, so a backlog leaves a slot for a
  // customer-facing (high) call every window/burst instead of taking the whole window at each turn.
  const rateLimiter = createRedisRateLimiter({ redis, token, burst, prefix: `${queuePrefix}:api-rate:`, inflightMs: API_TIMEOUT_MS, paceBelowHigh: true });
  // Runs of reconciled deliveries spend reconcile's budget (RECONCILE_BUDGET of the burst), as its listings do.
  const catchUp = catchUpLimiter(config, redis, rateLimiter);
  const cache = new ReadCache();
  // A run's client reports to its attempt's observer (the lifecycle stream: metrics, history, a span per attempt).
  return (keys, priority, source, runOnCall) => {
    const onCall = runOnCall ?? opts.onCall;
    return cache.wrap(createApiClient({
      baseUrl, token, burst, rateLimiter: source === 'reconcile' ? catchUp : rateLimiter, idempotencyKey: keys, timeoutMs: API_TIMEOUT_MS, priority,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
      ...(onCall ? { onCall } : {}),
      logger: opts.log,
    }));
  };
}

/** Which of the API's two settings are missing, said as they are. */
export function apiUnset(config: Pick<Config, 'workspaceApiUrl' | 'workspaceApiToken'>): string {
  if (!config.workspaceApiUrl && !config.workspaceApiToken) return 'WORKSPACE_API_URL and WORKSPACE_API_TOKEN are unset';
  return config.workspaceApiUrl ? `WORKSPACE_API_TOKEN is unset (WORKSPACE_API_URL is ${config.workspaceApiUrl})` : 'WORKSPACE_API_URL is unset (WORKSPACE_API_TOKEN is set)';
}
