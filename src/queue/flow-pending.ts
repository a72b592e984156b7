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

/** Takes deliveries off the set: they were fanned out, or will never be. */
export async function clearPendingFanOut(redis: RedisClient, prefix: string, ...deliveryKeys: string[]): Promise<void> {
  if (deliveryKeys.length > 0) await redis.zrem(ingestKeys(prefix).pendingFanOut, ...deliveryKeys);
}

/**
 * The worker's clears of the set, gathered: the deliveries fanned out within
 * one turn of the event loop leave it in one ZREM (one command, not one per
 * delivery). Each caller's promise settles with the command that carried its
 * key, so a fan-out still ends only once its delivery is off the set.
 */
export class PendingFanOutClears {
  #keys: string[] = [];
  #settle: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  #scheduled = false;

  constructor(private readonly redis: RedisClient, private readonly prefix: string) {}

  clear(deliveryKey: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#keys.push(deliveryKey);
      this.#settle.push({ resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    const keys = this.#keys;
    const settle = this.#settle;
    this.#keys = [];
    this.#settle = [];
    this.#scheduled = false;
    clearPendingFanOut(this.redis, this.prefix, ...keys).then(
      () => { for (const s of settle) s.resolve(); },
      (e: unknown) => { for (const s of settle) s.reject(e); },
    );
  }
}
