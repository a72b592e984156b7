/**
 * A pool of `slots` shared by several owners (workspaces), granted round-robin
 * across the owners that have someone waiting: an owner of weight w gets w
 * grants per turn, first come first served inside an owner, and an owner with
 * nobody waiting is skipped (a free slot is never kept for it). The worker's
 * fair share (src/worker/fair.ts) keeps one per priority.
 * @module
 */

/** A granted slot: `release()` gives it back once; later calls do nothing. */
export interface Lease {
  release(): void;
}

/** Who asks for a slot. */
export interface PoolOwner {
  readonly id: string;
  /** Grants per turn (a whole number ≥ 1; other values count as 1). */
  readonly weight: number;
}

interface Waiter {
  readonly grant: (lease: Lease) => void;
  readonly cleanup: () => void;
}

interface Line {
  readonly owner: PoolOwner;
  readonly waiters: Waiter[];
}

function grantsPerTurn(weight: number): number {
  return Number.isInteger(weight) && weight >= 1 ? weight : 1;
}

export class FairPool {
  readonly slots: number;
  #free: number;
  /** Owners with someone waiting, the longest unserved first. */
  readonly #ring: Line[] = [];
  /** The owner last granted a slot and the grants left in its turn (0: its turn is over). */
  #turn = { id: '', credit: 0 };

  constructor(slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`FairPool: slots must be a whole number ≥ 1 (got ${String(slots)})`);
    this.slots = slots;
    this.#free = slots;
  }

  /** Slots not granted. */
  get free(): number {
    return this.#free;
  }

  /** Runs waiting for a slot, every owner together. */
  get waiting(): number {
    return this.#ring.reduce((n, l) => n + l.waiters.length, 0);
  }

  /**
   * A slot for `owner`: at once when one is free, else when the round-robin comes to it.
   * `first`: at the head of its owner's line (a run taking back the slot it gave up).
   * Aborting `signal` while waiting leaves the line and rejects with its reason.
   */
  acquire(owner: PoolOwner, opts: { first?: boolean; signal?: AbortSignal } = {}): Promise<Lease> {
    const { signal } = opts;
    signal?.throwIfAborted();
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(this.#grant(owner));
    }
    return new Promise<Lease>((resolve, reject) => {
      const onAbort = (): void => {
        this.#leave(owner.id, waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = { grant: resolve, cleanup: () => signal?.removeEventListener('abort', onAbort) };
      signal?.addEventListener('abort', onAbort, { once: true });
      let line = this.#ring.find((l) => l.owner.id === owner.id);
      if (!line) {
        line = { owner, waiters: [] };
        this.#ring.push(line);
      }
      if (opts.first === true) line.waiters.unshift(waiter);
      else line.waiters.push(waiter);
    });
  }

  /** Runs `fn` holding a slot of `owner`; the slot is given back however `fn` ends. */
  async run<T>(owner: PoolOwner, fn: () => Promise<T>): Promise<T> {
    const lease = await this.acquire(owner);
    try {
      return await fn();
    } finally {
      lease.release();
    }
  }

  /** A slot granted to `owner`, counted in its turn. */
  #grant(owner: PoolOwner): Lease {
    if (this.#turn.id !== owner.id) this.#turn = { id: owner.id, credit: grantsPerTurn(owner.weight) };
    this.#turn.credit--;
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.#handOn();
      },
    };
  }

  #leave(id: string, waiter: Waiter): void {
    const i = this.#ring.findIndex((l) => l.owner.id === id);
    const line = this.#ring[i];
    if (!line) return;
    const j = line.waiters.indexOf(waiter);
    if (j >= 0) line.waiters.splice(j, 1);
    if (line.waiters.length === 0) this.#ring.splice(i, 1);
  }

  /** A slot came back: to the next waiter in turn, or to the free ones. */
  #handOn(): void {
    const head = this.#ring[0];
    if (head && head.owner.id === this.#turn.id && this.#turn.credit <= 0) this.#ring.push(this.#ring.shift() as Line);
    const line = this.#ring[0];
    if (!line) {
      this.#free++;
      return;
    }
    const waiter = line.waiters.shift() as Waiter;
    if (line.waiters.length === 0) this.#ring.shift();
    waiter.cleanup();
    waiter.grant(this.#grant(line.owner));
  }
}
