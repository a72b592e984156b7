/**
 * The one way Switchyard builds its own Workspace API clients: the worker's
 * handler and schedule runs, the poller, reconcile (scheduled and `switchyard
 * reconcile`), `replay --inline` and `doctor`'s check. Built once per process
 * (one shared limiter, one catch-up window, one read cache), then a client per
 * use with its priority, budget and Idempotency-Keys.
 * @module
 */
import {
  createApiClient,
  type ApiClient,
  type IdempotencyKeyGenerator,
  type LimiterPriority,
  type RateLimiter,
  createRedisRateLimiter,
  type ApiRetryOptions,
  type CallEvent,
  type WriteMemo,
} from '../api/index.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/index.js';
import { catchUpLimiter, reconcileBurst, rerunBurst } from './budget.js';
import { ReadCache } from './read-cache.js';
import { slotYieldingLimiter, type PausableSlot } from './slot-yield.js';

/** Per-request timeout of the clients built here (also the longest a call's rate-limit slot counts as in flight). */
export const API_TIMEOUT_MS = 30_000;

/** The limits every process of the token shares in Redis. */
export interface SharedLimits {
  readonly redis: RedisClient;
  /** QUEUE_PREFIX: the windows are `<prefix>:api-rate:` and `<prefix>:reconcile-rate:`. */
  readonly prefix: string;
  /** Calls per 10 s of the catch-up window (reconcileBurst(): RECONCILE_BUDGET of the burst). */
  readonly catchUpBurst: number;
  /** Calls per 10 s of the re-runs' window (rerunBurst(): RERUN_SHARE of the burst); default the catch-up burst. */
  readonly rerunBurst?: number;
}

/** What every client of one process shares. */
export interface ApiClientsOptions {
  readonly baseUrl: string;
  readonly token: string;
  readonly burst: number;
  /** The limits shared across processes; absent, a limiter of this process only (a CLI's single check, an inline run). */
  readonly shared?: SharedLimits | undefined;
  /**
   * Below `high`, grants are paced once the window is a tenth full, so a backlog leaves a slot
   * for a customer-facing (high) call every window/burst (the worker's runs). Default off.
   */
  readonly pace?: boolean;
  /** One short-lived read cache shared by every client (src/clients/read-cache.ts). Default off. */
  readonly readCache?: boolean;
  /** Observes every attempt of every client (metrics, tracing). */
  readonly onCall?: ((e: CallEvent) => void) | undefined;
  readonly fetch?: typeof fetch | undefined;
  readonly log?: Logger | undefined;
  readonly retry?: Partial<ApiRetryOptions>;
  /**
   * The worker slot of the run a call is made for (the worker's fair share; undefined outside a run):
   * a call waiting for the shared limiter past SLOT_YIELD_AFTER_MS gives it up until its permit comes
   * (src/clients/slot-yield.ts). Default: none.
   */
  readonly slot?: (() => PausableSlot | undefined) | undefined;
}

/** One client's own part. */
export interface ApiCall {
  /** Priority of its calls at the shared limiter (default `normal`). */
  readonly priority?: LimiterPriority;
  /** Idempotency-Keys of its writes (default: random). */
  readonly keys?: IdempotencyKeyGenerator;
  /**
   * `catch-up`: each call also takes a slot of the catch-up window (RECONCILE_BUDGET) first:
   * reconcile's listings and the runs of the deliveries it synthesized. `rerun`: the same in the re-runs'
   * window (RERUN_SHARE): the runs of `switchyard rerun` batches. Default `live`.
   */
  readonly budget?: 'live' | 'catch-up' | 'rerun';
  /** Order of waiters inside the catch-up window (default `low`; reconcile's own listings go first: `high`). */
  readonly budgetPriority?: LimiterPriority;
  /** Observes this client's attempts (besides the process's `onCall`). */
  readonly onCall?: (e: CallEvent) => void;
  /** Remembered writes by Idempotency-Key (a worker run's memory across its sleeps and waits). */
  readonly memo?: WriteMemo;
}

/** Builds a client per use; every client of it shares the limiter, the catch-up window and the read cache. */
export type ApiClients = (call?: ApiCall) => ApiClient;

/**
 * The builder. A call's slot counts as in flight for at most the request
 * timeout: a killed process never marks its calls done, so when they filled
 * the window, the limiter's 60 s default kept every worker waiting 70 s after
 * the kill.
 */
export function apiClients(opts: ApiClientsOptions): ApiClients {
  const { baseUrl, token, burst, shared } = opts;
  const limiter: RateLimiter | undefined = shared
    ? createRedisRateLimiter({
        redis: shared.redis,
        token,
        burst,
        prefix: `${shared.prefix}:api-rate:`,
        inflightMs: API_TIMEOUT_MS,
        ...(opts.pace ? { paceBelowHigh: true } : {}),
      })
    : undefined;
  const own = new Map<string, RateLimiter>();
  const ownAt = (window: 'reconcile' | 'rerun', p: LimiterPriority): RateLimiter => {
    let l = own.get(`${window}|${p}`);
    if (!l && shared && limiter) {
      const windowBurst = window === 'rerun' ? (shared.rerunBurst ?? shared.catchUpBurst) : shared.catchUpBurst;
      l = catchUpLimiter({ redis: shared.redis, token, prefix: shared.prefix, burst: windowBurst, window }, limiter, p);
      own.set(`${window}|${p}`, l);
    }
    return l ?? (limiter as RateLimiter);
  };
  const cache = opts.readCache ? new ReadCache() : undefined;
  return (call = {}) => {
    const observers = [opts.onCall, call.onCall].filter((f): f is (e: CallEvent) => void => f !== undefined);
    const onCall =
      observers.length > 1
        ? (e: CallEvent) => {
            for (const f of observers) f(e);
          }
        : observers[0];
    const budget = call.budget ?? 'live';
    const windowed =
      limiter && budget !== 'live' ? ownAt(budget === 'rerun' ? 'rerun' : 'reconcile', call.budgetPriority ?? 'low') : limiter;
    const rateLimiter = windowed && opts.slot ? slotYieldingLimiter(windowed, opts.slot) : windowed;
    const client = createApiClient({
      baseUrl,
      token,
      burst,
      timeoutMs: API_TIMEOUT_MS,
      ...(rateLimiter ? { rateLimiter } : {}),
      ...(call.priority ? { priority: call.priority } : {}),
      ...(call.keys ? { idempotencyKey: call.keys } : {}),
      ...(opts.retry ? { retry: opts.retry } : {}),
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
      ...(onCall ? { onCall } : {}),
      ...(opts.log ? { logger: opts.log } : {}),
      ...(call.memo ? { memo: call.memo } : {}),
    });
    return cache ? cache.wrap(client) : client;
  };
}

/**
 * {@link apiClients} on the configuration: WORKSPACE_API_URL, _TOKEN and
 * _BURST; with `redis`, the limits of QUEUE_PREFIX, RECONCILE_BUDGET and RERUN_SHARE shared
 * with every process. Undefined when the URL or the token is unset.
 */
export function configuredApiClients(
  config: Pick<Config, 'workspaceApiUrl' | 'workspaceApiToken' | 'workspaceApiBurst' | 'queuePrefix' | 'reconcile'> &
    Partial<Pick<Config, 'rerun'>>,
  redis: RedisClient | undefined,
  opts: Omit<ApiClientsOptions, 'baseUrl' | 'token' | 'burst' | 'shared'> = {},
): ApiClients | undefined {
  const { workspaceApiUrl: baseUrl, workspaceApiToken: token, workspaceApiBurst: burst } = config;
  if (!baseUrl || !token) return undefined;
  const rerun = config.rerun ? { rerunBurst: rerunBurst({ workspaceApiBurst: config.workspaceApiBurst, rerun: config.rerun }) } : {};
  const shared = redis ? { redis, prefix: config.queuePrefix, catchUpBurst: reconcileBurst(config), ...rerun } : undefined;
  return apiClients({ ...opts, baseUrl, token, burst, shared });
}
