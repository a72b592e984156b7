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

  /** Gives the slot back to the pool while the run waits (nothing when it holds none). */
  pause(): void {
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
    this.#ended.signal.throwIfAborted();
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
