import type { RedisClient } from '../redis/index.js';
import { isRepeatableChange, reconciledAfter } from '../events/index.js';
import { runFanOutCheck, type ScriptPart } from './scripts.js';
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
/**
 * How far a webhook's event time may trail the snapshot's time of the state
 * before a change: both on the API's clock (the snapshot reads it from the
 * `Date` header, whole seconds), so a margin of seconds, not a minute.
 */
export const AFTER_SKEW_MS = 2_000;

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
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlMs: number,
    private readonly world: WorldSource | null = null,
  ) {}

  async claim(changeKey: string, who: ChangeClaimant): Promise<boolean> {
    const [reply] = await runFanOutCheck(this.redis, [{ claim: await this.claimPart(changeKey, who), waits: null }]);
    return reply?.claimed === true;
  }

  /** The claim's keys and arguments in the fan-out check script (runFanOutCheck runs it, alone or with the waits' part). */
  async claimPart(changeKey: string, who: ChangeClaimant): Promise<ScriptPart> {
    const world = worldAt(this.world ? await this.world.current() : null, who.receivedAtMs ?? null);
    const key = changeClaimKey(this.prefix, changeKey, world);
    const repeatable = isRepeatableChange(changeKey) ? '1' : '0';
    const at = who.atMs === null || !Number.isFinite(who.atMs) ? '' : Math.floor(who.atMs);
    const after = who.source === 'reconcile' ? (reconciledAfter(who.deliveryKey) ?? '') : '';
    return { keys: [key], args: [who.deliveryKey, who.source, at, this.ttlMs, repeatable, CLOCK_SKEW_MS, after, AFTER_SKEW_MS] };
  }

  /**
   * Whether each change was received already, for changes reconcile inferred
   * from its snapshot: the change came after `afterMs` (the record was last
   * seen in the state before it then). Received: its key is claimed by
   * `deliveryKey` (reconcile's own copy), or by a delivery not older than
   * `afterMs` (beyond AFTER_SKEW_MS for a webhook, whose event time is on the
   * API's clock like `afterMs`; CLOCK_SKEW_MS for a copy, timed by our clock), or of unknown time. A claim older than
   * that is an earlier change of the same key; the same rule as the claim
   * script's, so what this calls missing, the copy's claim takes over.
   */
  async received(changes: readonly { changeKey: string; afterMs: number | null; deliveryKey: string }[]): Promise<boolean[]> {
    const world = worldAt(this.world ? await this.world.current() : null, null);
    return Promise.all(
      changes.map(async (c) => {
        const cur = await this.redis.get(changeClaimKey(this.prefix, c.changeKey, world));
        if (cur === null) return false;
        const claim = parseClaim(cur);
        if (claim.holder === c.deliveryKey || c.afterMs === null || !isRepeatableChange(c.changeKey)) return true;
        return claim.atMs === null || claim.atMs + (claim.source === 'webhook' ? AFTER_SKEW_MS : CLOCK_SKEW_MS) >= c.afterMs;
      }),
    );
  }

  /** Which of the change keys are claimed (received and fanned out) already, in this world. */
  async claimed(changeKeys: readonly string[]): Promise<boolean[]> {
    const world = worldAt(this.world ? await this.world.current() : null, null);
    // One EXISTS per key (a Cluster spreads them over slots); ioredis pipelines those sent in one turn.
    return Promise.all(changeKeys.map(async (k) => (await this.redis.exists(changeClaimKey(this.prefix, k, world))) === 1));
  }
}

/** A claim's value (`v2|<source>|<at ms>|<delivery key>`, or an older version's bare delivery key), read as the claim script reads it. */
export function parseClaim(value: string): { source: string; atMs: number | null; holder: string } {
  const m = /^v2\|([a-z]*)\|(\d*)\|(.*)$/.exec(value);
  if (!m) return { source: value.startsWith('rc:') ? 'reconcile' : 'webhook', atMs: null, holder: value };
  return { source: m[1] as string, atMs: m[2] ? Number(m[2]) : null, holder: m[3] as string };
}
