import type { RedisClient } from '../redis/connection.js';

/** Redis key of a change claim (`src/events/change-key.ts` computes the change key). */
export function changeClaimKey(prefix: string, changeKey: string): string {
  return `${prefix}:change:${changeKey}`;
}

/**
 * Change-level dedupe, at fan-out: the first delivery of a change (a real
 * webhook or a delivery synthesized by reconcile) claims its change key for
 * `ttlMs` (DEDUPE_TTL), holding its own delivery key. Answers true when this
 * delivery holds the claim: it claimed it now, or it claimed it before (a
 * retried or recovered `events` job of the same delivery must still fan out,
 * its job ids make the repeat add nothing). False: another delivery of the same
 * change claimed it, so this one runs no handler.
 */
export class ChangeClaims {
  constructor(private readonly redis: RedisClient, private readonly prefix: string, private readonly ttlMs: number) {}

  async claim(changeKey: string, deliveryKey: string): Promise<boolean> {
    const key = changeClaimKey(this.prefix, changeKey);
    const set = await this.redis.set(key, deliveryKey, 'PX', this.ttlMs, 'NX');
    if (set === 'OK') return true;
    return (await this.redis.get(key)) === deliveryKey;
  }

  /** Which of the change keys are claimed (received and fanned out) already. */
  async claimed(changeKeys: readonly string[]): Promise<boolean[]> {
    // One EXISTS per key (a Cluster spreads them over slots); ioredis pipelines those sent in one turn.
    return Promise.all(changeKeys.map(async (k) => (await this.redis.exists(changeClaimKey(this.prefix, k))) === 1));
  }
}
