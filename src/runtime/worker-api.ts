import type { ApiClient, IdempotencyKeyGenerator, CallEvent, WriteMemo, LimiterPriority } from '../api/index.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/index.js';
import { configuredApiClients } from '../clients/index.js';
import { currentFairSlot } from '../worker/index.js';

/** Builds the API client of one run (see {@link workerApiFactories}). */
export type RunApiFactory = (
  keys: IdempotencyKeyGenerator,
  priority: LimiterPriority,
  source?: string,
  onCall?: (e: CallEvent) => void,
  memo?: WriteMemo,
) => ApiClient;

/**
 * The API client factories of a worker process, built by the one builder
 * (src/clients/api-clients.ts): one shared Redis rate limiter (paced below high)
 * and one read cache, a client per run with that run's Idempotency-Key
 * generator and priority (its calls take API slots in priority order across
 * processes); runs of reconciled deliveries spend reconcile's budget
 * (RECONCILE_BUDGET of the burst), as its listings do. `rerun` builds the
 * clients of the runs of `switchyard rerun` batches: each call takes a slot of
 * the re-runs' own window (RERUN_SHARE of the burst) first. A run's call that
 * waits for the limiter gives the run's worker slot back to the fair pools
 * meanwhile (currentFairSlot: src/worker/fair.ts; src/clients/slot-yield.ts). Undefined when no
 * API is configured (a handler that calls it is dead-lettered with that reason).
 */
export function workerApiFactories(
  opts: {
    config: Config;
    log: Logger;
    fetch?: typeof fetch | undefined;
    /** Reports every call's attempts of a client built without an `onCall` of its own (the lifecycle's `api-call`, the poller's). */
    onCall?: ((e: CallEvent) => void) | undefined;
  },
  redis: RedisClient,
): { live: RunApiFactory; rerun: RunApiFactory } | undefined {
  const { config } = opts;
  if (!config.workspaceApiUrl || !config.workspaceApiToken) {
    opts.log.warn(`${apiUnset(config)}: handlers that call the API will be dead-lettered with that reason`);
    return undefined;
  }
  // One limiter and one read cache per process; a run's client reports to its attempt's observer
  // (the lifecycle stream: metrics, history, a span per attempt), other clients to the process's.
  const clients = configuredApiClients(config, redis, {
    pace: true,
    readCache: true,
    fetch: opts.fetch,
    log: opts.log,
    slot: currentFairSlot,
  });
  if (!clients) return undefined;
  const factory =
    (rerun: boolean): RunApiFactory =>
    (keys, priority, source, runOnCall, memo) => {
      const onCall = runOnCall ?? opts.onCall;
      return clients({
        keys,
        priority,
        budget: rerun ? 'rerun' : source === 'reconcile' ? 'catch-up' : 'live',
        ...(onCall ? { onCall } : {}),
        ...(memo ? { memo } : {}),
      });
    };
  return { live: factory(false), rerun: factory(true) };
}

/** Which of the API's two settings are missing, said as they are. */
export function apiUnset(config: Pick<Config, 'workspaceApiUrl' | 'workspaceApiToken'>): string {
  if (!config.workspaceApiUrl && !config.workspaceApiToken) return 'WORKSPACE_API_URL and WORKSPACE_API_TOKEN are unset';
  return config.workspaceApiUrl
    ? `WORKSPACE_API_TOKEN is unset (WORKSPACE_API_URL is ${config.workspaceApiUrl})`
    : 'WORKSPACE_API_URL is unset (WORKSPACE_API_TOKEN is set)';
}
