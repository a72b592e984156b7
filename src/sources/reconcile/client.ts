import type { ApiClient, CallEvent } from '../../api/index.js';
import type { Config } from '../../config/index.js';
import type { RedisClient } from '../../redis/index.js';
import { configuredApiClients, type ApiCall } from '../../clients/index.js';

/**
 * Reconcile's part of a client: priority `low` at the shared limiter (the one
 * the workers use, `<QUEUE_PREFIX>:api-rate:`), and within the catch-up budget
 * (`<QUEUE_PREFIX>:reconcile-rate:`, RECONCILE_BUDGET of the burst), so live
 * traffic keeps the rest. Inside that window its listings go before the
 * handler runs they caused (few calls, and the report waits on them).
 */
export const RECONCILE_CALL: ApiCall = Object.freeze({ priority: 'low', budget: 'catch-up', budgetPriority: 'high' });

/**
 * Reconcile's API client (scheduled and `switchyard reconcile`), built by the
 * one builder (src/clients/api-clients.ts) with the limits shared in `redis`.
 * Null when no API is configured.
 */
export function reconcileClient(config: Config, redis: RedisClient, onCall?: (c: CallEvent) => void): ApiClient | null {
  return configuredApiClients(config, redis)?.({ ...RECONCILE_CALL, ...(onCall ? { onCall } : {}) }) ?? null;
}
