import { LuaScripts } from '../../util/index.js';
import type { RedisClient } from '../../redis/index.js';

import { randomBytes } from 'node:crypto';

/**
 * `ctx.state`: a JSON value per (handler, key) kept in Redis until its TTL,
 * one writer at a time. `update(fn)` takes the key's writer lock (a lease, so
 * a killed process holds it at most `LEASE_MS`), reads, applies `fn` once and
 * writes while still holding the lock (one Lua step that also lets it go):
 * concurrent runs of the same key (a handler with `state` but no `orderBy`)
 * never lose an update, and `fn` never sees a value another writer is about to
 * replace.
 */

export const STATE_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), ['stateWrite']);
const SCRIPTS = STATE_SCRIPTS;

/** A JSON value: what `ctx.state` keeps. */
export type StateValue = null | boolean | number | string | readonly StateValue[] | { readonly [k: string]: StateValue };

/** How long a writer holds a key's lock at most (a process killed mid-update frees it after this). */
export const LEASE_MS = 10_000;
/** How long `update` waits for the lock before it gives up. */
export const WAIT_MS = 30_000;

export class StateBusyError extends Error {
  readonly code = 'state_busy';
  constructor(key: string, reason: string) {
    super(`ctx.state of ${key}: ${reason}; the update was not applied`);
    this.name = 'StateBusyError';
  }
}

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class HandlerStateStore {
  private readonly run;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    this.run = SCRIPTS.on(redis);
  }

  /** The Redis key of one handler's state for one key. */
  keyOf(handlerId: string, key: string): string {
    return `${this.prefix}:state:${handlerId}:${key}`;
  }

  async get(handlerId: string, key: string): Promise<StateValue | undefined> {
    const j = await this.redis.hget(this.keyOf(handlerId, key), 'j');
    return j === null ? undefined : (JSON.parse(j) as StateValue);
  }

  /** Replaces the value (whatever it was). */
  async set(handlerId: string, key: string, value: StateValue, ttlMs: number): Promise<void> {
    await this.update(handlerId, key, () => value, ttlMs);
  }

  /** Applies `fn` to the current value (undefined when there is none) and writes its result; returns it. */
  async update(
    handlerId: string,
    key: string,
    fn: (current: StateValue | undefined) => StateValue | Promise<StateValue>,
    ttlMs: number,
  ): Promise<StateValue> {
    const k = this.keyOf(handlerId, key);
    const lock = `${k}:lock`;
    const token = randomBytes(8).toString('hex');
    const deadline = Date.now() + WAIT_MS;
    for (let backoff = 2; (await this.redis.set(lock, token, 'PX', LEASE_MS, 'NX')) !== 'OK'; backoff = Math.min(backoff * 2, 50)) {
      if (Date.now() > deadline) throw new StateBusyError(`${handlerId} ${key}`, `another writer held it for ${WAIT_MS / 1000} s`);
      await pause(backoff / 2 + Math.random() * backoff);
    }
    let json: string;
    try {
      const j = await this.redis.hget(k, 'j');
      const text = JSON.stringify(await fn(j === null ? undefined : (JSON.parse(j) as StateValue))) as string | undefined;
      if (text === undefined) throw new TypeError('ctx.state: the value must be JSON (an object, array, string, number, boolean or null)');
      json = text;
    } catch (err) {
      // fn threw or gave no JSON: nothing is written, and the lock is let go at once.
      await this.run.stateWrite([k, lock], [token, '', ttlMs]);
      throw err;
    }
    // Writes the value and lets the lock go in one step.
    if ((await this.run.stateWrite([k, lock], [token, json, ttlMs])) === -1) {
      throw new StateBusyError(`${handlerId} ${key}`, `the update took longer than the lock's lease (${LEASE_MS / 1000} s)`);
    }
    return JSON.parse(json) as StateValue;
  }
}
