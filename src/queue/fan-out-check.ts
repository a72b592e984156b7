import type { RedisClient } from '../redis/index.js';
import type { ChangeClaimant, ChangeClaims } from './change.js';
import { runFanOutCheck, type AnsweredWait, type FanOutCheckReply, type FanOutCheckSection } from './scripts.js';
import type { WaitEvent, WaitStore } from './waits/wait-store.js';

/** An event as the waits part takes it: the body and match keys are made only when its name is watched. */
export interface CheckedEvent extends Pick<WaitEvent, 'deliveryKey' | 'name' | 'receivedAt'> {
  /** Its body (what a matched wait returns) and match keys. */
  full(): Pick<WaitEvent, 'body' | 'keys'>;
}

/** The most deliveries one call checks (the script runs them one after the other, Redis held meanwhile). */
export const MAX_BATCH = 64;

/**
 * The checks of one delivery at fan-out, in one script call (lua/fanOutCheck-n.lua): the claim of
 * its change key (ChangeClaims, change-level dedupe), then, when it holds the claim, the durable
 * waits it answers (WaitStore, only watched names). The deliveries checked within one tick share
 * the call (one section each, checked one after the other, as separate calls would be). A name this process has not seen watched goes
 * without its body and match keys (most deliveries: nobody waits on their name); when the script
 * finds it watched it answers so, and a second call, without the claim, does the waits part. A name
 * stays watched once it is (WaitStore.watch), so that costs one more call per name per process.
 */
export class FanOutChecks {
  /** Names seen watched: their body and match keys go with the first call. */
  readonly #watched = new Set<string>();
  /** The sections of this tick, sent together (like ioredis' auto-pipelining, which sends them in one write anyway). */
  #batch: { section: FanOutCheckSection; resolve: (r: FanOutCheckReply) => void; reject: (e: unknown) => void }[] = [];
  #scheduled = false;

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
    const first = await this.#run({ claim: part, waits: this.waits.eventPart(this.#event(event, sent), now, true, sent) });
    if (!first.claimed || !first.need) return { claimed: first.claimed, woken: first.woken };
    this.#watched.add(event.name);
    const again = await this.#run({ claim: null, waits: this.waits.eventPart(this.#event(event, true), now, true) });
    return { claimed: true, woken: again.woken };
  }

  #event(e: CheckedEvent, full: boolean): WaitEvent {
    return { deliveryKey: e.deliveryKey, name: e.name, receivedAt: e.receivedAt, ...(full ? e.full() : { body: '', keys: [] }) };
  }

  /** Queues a section for the call that carries those of this tick (at most {@link MAX_BATCH}); its reply. */
  #run(section: FanOutCheckSection): Promise<FanOutCheckReply> {
    return new Promise((resolve, reject) => {
      this.#batch.push({ section, resolve, reject });
      if (this.#batch.length >= MAX_BATCH) this.#flush();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        process.nextTick(() => this.#flush());
      }
    });
  }

  #flush(): void {
    const batch = this.#batch;
    this.#batch = [];
    this.#scheduled = false;
    if (batch.length === 0) return;
    runFanOutCheck(
      this.redis,
      batch.map((b) => b.section),
    ).then(
      (replies) =>
        batch.forEach((b, i) => (replies[i] ? b.resolve(replies[i]) : b.reject(new Error('fan-out check: no reply for a delivery')))),
      (err: unknown) => batch.forEach((b) => b.reject(err)),
    );
  }
}
