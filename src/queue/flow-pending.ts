import type { RedisClient } from '../redis/connection.js';
import { ingestKeys } from './names.js';

/**
 * The pending fan-out set: deliveries queued in `events` and not fanned out
 * yet, by receipt time (`ingestKeys().pendingFanOut`). The pump marks a batch
 * as it queues it; the events worker clears a delivery once it is fanned out
 * or dead-lettered (src/queue/flow.ts); an ordered run whose delivery was
 * received after one still here holds (orderClaim-4.lua: it may be an earlier
 * event of its key).
 */

/** Entries a lost job left behind are dropped after this long; ordered runs only look at the last minute before theirs. */
const PENDING_KEEP_MS = 3_600_000;

/** Marks deliveries as queued for fan-out (NX: a repeated batch keeps the first time). */
export async function markPendingFanOut(redis: RedisClient, prefix: string, deliveries: readonly { key: string; receivedAt: string }[]): Promise<void> {
  if (deliveries.length === 0) return;
  const key = ingestKeys(prefix).pendingFanOut;
  const entries = deliveries.flatMap((d) => [Date.parse(d.receivedAt) || Date.now(), d.key]);
  await redis.multi().zadd(key, 'NX', ...entries).zremrangebyscore(key, '-inf', Date.now() - PENDING_KEEP_MS).exec();
}

/** Takes a delivery off the set: it was fanned out, or will never be. */
export async function clearPendingFanOut(redis: RedisClient, prefix: string, deliveryKey: string): Promise<void> {
  await redis.zrem(ingestKeys(prefix).pendingFanOut, deliveryKey);
}
