import type { RedisClient } from '../redis/connection.js';
import type { ChangeClaimant, ChangeClaims } from './change.js';
import { runFanOutCheck, type AnsweredWait } from './scripts.js';
import type { WaitEvent, WaitStore } from './waits/store.js';

/** An event as the waits part takes it: the body and match keys are made only when its name is watched. */
export interface CheckedEvent extends Pick<WaitEvent, 'deliveryKey' | 'name' | 'receivedAt'> {
  /** Its body (what a matched wait returns) and match keys. */
  full(): Pick<WaitEvent, 'body' | 'keys'>;
}

/**
 * The checks of one delivery at fan-out, in one script call (lua/fanOutCheck-n.lua): the claim of
 * its change key (ChangeClaims, change-level dedupe), then, when it holds the claim, the durable
 * waits it answers (WaitStore, only watched names). A name this process has not seen watched goes
 * without its body and match keys (most deliveries: nobody waits on their name); when the script
 * finds it watched it answers so, and a second call, without the claim, does the waits part. A name
 * stays watched once it is (WaitStore.watch), so that costs one more call per name per process.
 */
export class FanOutChecks {
  /** Names seen watched: their body and match keys go with the first call. */
  readonly #watched = new Set<string>();

  constructor(
    private readonly redis: RedisClient,
    private readonly claims: ChangeClaims,
    private readonly waits: WaitStore,
  ) {}

  /** Claims `claim`'s change key (null: none) and answers the waits; `claimed` false: another delivery of the change holds it, nothing was answered. */
  async check(
    claim: { readonly changeKey: string; readonly who: ChangeClaimant } | null,
    event: CheckedEvent,
    now: number,
  ): Promise<{ claimed: boolean; woken: AnsweredWait[] }> {
    const part = claim ? await this.claims.claimPart(claim.changeKey, claim.who) : null;
    const sent = this.#watched.has(event.name);
    const first = await runFanOutCheck(this.redis, part, this.waits.eventPart(this.#event(event, sent), now, true, sent));
    if (!first.claimed || !first.need) return { claimed: first.claimed, woken: first.woken };
    this.#watched.add(event.name);
    const again = await runFanOutCheck(this.redis, null, this.waits.eventPart(this.#event(event, true), now, true));
    return { claimed: true, woken: again.woken };
  }

  #event(e: CheckedEvent, full: boolean): WaitEvent {
    return { deliveryKey: e.deliveryKey, name: e.name, receivedAt: e.receivedAt, ...(full ? e.full() : { body: '', keys: [] }) };
  }
}
