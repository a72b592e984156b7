import type { RedisClient } from '../redis/connection.js';
import { isRepeatableChange } from '../events/change-key.js';
import { QUEUE_SCRIPTS } from './scripts.js';
import { worldAt, type WorldSource } from './world.js';

/**
 * Redis key of a change claim (`src/events/change-key.ts` computes the change
 * key). A claim belongs to the world it was made in (src/queue/world.ts): a
 * fresh sandbox reuses record ids, so its changes are not those of the last one.
 */
export function changeClaimKey(prefix: string, changeKey: string, world: string | null = null): string {
  return world === null ? `${prefix}:change:${changeKey}` : `${prefix}:change:@${world}:${changeKey}`;
}

/** How far an event's own time may trail a reconcile's observation of the same change (clocks differ). */
export const CLOCK_SKEW_MS = 60_000;

/** The delivery claiming a change. */
export interface ChangeClaimant {
  readonly deliveryKey: string;
  /** `webhook`, or what Switchyard made it from (`reconcile`, `poll`). */
  readonly source: string;
  /** A webhook's event time; a reconciled copy's observation time (its receipt); null when unknown. */
  readonly atMs: number | null;
  /** When Switchyard received it: a delivery received before the current world began belongs to the one before. */
  readonly receivedAtMs?: number | null;
}

/**
 * Change-level dedupe, at fan-out: the first delivery of a change (a real
 * webhook or a delivery synthesized by reconcile) claims its change key for
 * `ttlMs` (DEDUPE_TTL). Answers true when this delivery holds the claim: it
 * claimed it now, or it claimed it before (a retried or recovered `events` job
 * of the same delivery must still fan out; its job ids make the repeat add
 * nothing). False: another delivery of the same change claimed it, so this
 * one runs no handler.
 *
 * A change key that can name a later, new change (`lead.won` of a lead
 * reopened and won again: the record keeps no time of its outcome) is taken
 * over by a real delivery with another id, and by a real delivery whose event
 * is later than a reconciled copy's observation; a reconciled copy, or a real
 * delivery older than that observation, is the same change.
 */
export class ChangeClaims {
  private readonly run;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlMs: number,
    private readonly world: WorldSource | null = null,
  ) {
    this.run = QUEUE_SCRIPTS.on(redis);
  }

  async claim(changeKey: string, who: ChangeClaimant): Promise<boolean> {
    const world = worldAt(this.world ? await this.world.current() : null, who.receivedAtMs ?? null);
    const key = changeClaimKey(this.prefix, changeKey, world);
    const repeatable = isRepeatableChange(changeKey) ? '1' : '0';
    const at = who.atMs === null || !Number.isFinite(who.atMs) ? '' : Math.floor(who.atMs);
    return (await this.run.changeClaim([key], [who.deliveryKey, who.source, at, this.ttlMs, repeatable, CLOCK_SKEW_MS])) === 1;
  }

  /** Which of the change keys are claimed (received and fanned out) already, in this world. */
  async claimed(changeKeys: readonly string[]): Promise<boolean[]> {
    const world = worldAt(this.world ? await this.world.current() : null, null);
    // One EXISTS per key (a Cluster spreads them over slots); ioredis pipelines those sent in one turn.
    return Promise.all(changeKeys.map(async (k) => (await this.redis.exists(changeClaimKey(this.prefix, k, world))) === 1));
  }
}
