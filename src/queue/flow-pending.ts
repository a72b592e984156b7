import { sendNow, type RedisClient } from '../redis/index.js';
import { ingestKeys } from './names.js';

/**
 * The pending fan-out set: every delivery accepted and not fanned out yet, by
 * receipt time (`ingestKeys().pendingFanOut`, receipt ms → delivery key).
 * The ingest script marks a delivery in the same step that stores it
 * (lua/ingestBatch-n.lua: the receiver, the spool drainer, reconcile, the
 * poller), so the set covers every place an accepted delivery can sit: the
 * inbox, a live or dead pump's in-flight list, the `events` queue (waiting,
 * active, delayed retries). The events worker clears a delivery once it is
 * fanned out or dead-lettered (src/queue/flow.ts, flow-adapter.ts). Two
 * readers: an ordered run whose delivery was received after one still here
 * holds (orderClaim-4.lua: it may be an earlier event of its key), and a
 * durable run whose sleep or wait fell due holds while the oldest entry was
 * received at or before its due time (src/worker/hold.ts: it may answer it).
 */

/** Entries a lost delivery left behind (an unreadable inbox item, a job removed by hand) are dropped after this long. */
export const PENDING_KEEP_MS = 3_600_000;

/** Drops entries received more than {@link PENDING_KEEP_MS} ago (the pumps do it with their heartbeat). */
export function trimPendingFanOut(redis: RedisClient, prefix: string, now = Date.now()): Promise<number> {
  return redis.zremrangebyscore(ingestKeys(prefix).pendingFanOut, '-inf', String(now - PENDING_KEEP_MS));
}

/** The delivery pending fan-out that was received first (its key and receipt ms), or null when none is. */
export async function oldestPendingFanOut(redis: RedisClient, prefix: string): Promise<{ key: string; at: number } | null> {
  const r = await redis.zrange(ingestKeys(prefix).pendingFanOut, '0', '0', 'WITHSCORES');
  return r.length >= 2 ? { key: r[0] as string, at: Number(r[1]) } : null;
}

/**
 * The worker's clears of the set (deliveries fanned out, or that never will be),
 * gathered: the deliveries fanned out within one tick (the callbacks run before
 * the next process.nextTick) leave it in one ZREM, one command and one write, not
 * one per delivery. Each caller's promise settles with the command that carried
 * its key, so a fan-out still ends only once its delivery is off the set.
 */
export class PendingFanOutClears {
  #keys: string[] = [];
  #settle: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  #scheduled = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  clear(deliveryKey: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#keys.push(deliveryKey);
      this.#settle.push({ resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        process.nextTick(() => this.#flush());
      }
    });
  }

  #flush(): void {
    const keys = this.#keys;
    const settle = this.#settle;
    this.#keys = [];
    this.#settle = [];
    this.#scheduled = false;
    // Sent at once, in its own write: on the worker's auto-pipelined connection the turn's pipeline would only
    // add an ioredis Pipeline and a wait for the next turn to this command, which carries the turn's clears already.
    sendNow(this.redis, 'zrem', [ingestKeys(this.prefix).pendingFanOut, ...keys]).then(
      () => {
        for (const s of settle) s.resolve();
      },
      (e: unknown) => {
        for (const s of settle) s.reject(e);
      },
    );
  }
}
