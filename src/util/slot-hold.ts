/**
 * The slot of one run in a {@link FairPool}, which the run can give up while it
 * waits for something that is not the pool's to give (its workspace's API
 * budget) and take back, first in its owner's line, when that comes.
 * @module
 */
import type { FairPool, Lease, PoolOwner } from './fair-pool.js';

export class SlotHold {
  readonly #pool: FairPool;
  readonly #owner: PoolOwner;
  #lease: Lease | undefined;
  #retake: Promise<void> | undefined;
  /** Pins held: while any is, {@link pause} keeps the slot. */
  #pins = 0;
  readonly #ended = new AbortController();

  constructor(pool: FairPool, owner: PoolOwner, lease: Lease) {
    this.#pool = pool;
    this.#owner = owner;
    this.#lease = lease;
  }

  /** Whether the run holds its slot now. */
  get held(): boolean {
    return this.#lease !== undefined;
  }

  /**
   * Keeps the slot while the run is doing something that needs it: an API call past its permit is in flight (the
   * handler may go on with another call's answer meanwhile), or it holds a lock others wait for with their slots
   * (a `ctx.state` update: giving the slot up there would leave it to the waiters and never get one back).
   * Returns the unpin, which counts once.
   */
  pin(): () => void {
    this.#pins += 1;
    let pinned = true;
    return () => {
      if (pinned) this.#pins -= 1;
      pinned = false;
    };
  }

  /** Gives the slot back to the pool while the run waits (nothing when it holds none, or while it is pinned). */
  pause(): void {
    if (this.#pins > 0) return;
    const lease = this.#lease;
    this.#lease = undefined;
    lease?.release();
  }

  /**
   * Takes a slot again, first in the owner's line; resolves at once when the run holds one.
   * Rejects when the run ended meanwhile ({@link close}).
   */
  resume(): Promise<void> {
    if (this.#lease) return Promise.resolve();
    // A rejection, never a throw: the caller's `.catch` must see it.
    if (this.#ended.signal.aborted) return Promise.reject(this.#ended.signal.reason as Error);
    this.#retake ??= this.#pool.acquire(this.#owner, { first: true, signal: this.#ended.signal }).then(
      (lease) => {
        this.#retake = undefined;
        if (this.#ended.signal.aborted) lease.release();
        else this.#lease = lease;
      },
      (err: unknown) => {
        this.#retake = undefined;
        throw err;
      },
    );
    return this.#retake;
  }

  /** The run is over: its slot goes back (once), a retake still waiting leaves the line. */
  close(): void {
    if (this.#ended.signal.aborted) return;
    this.#ended.abort(new Error(`the run of ${this.#owner.id} ended while taking its slot back`));
    this.pause();
  }
}
