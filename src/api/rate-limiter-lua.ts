import type { Cluster, Redis } from 'ioredis';
import { LuaScripts } from '../redis/lua.js';

/**
 * Typed calls of the shared rate limiter's Lua scripts (`./lua/*.lua`, which
 * document their keys, arguments and replies). Every script reads the Redis
 * server's clock (`TIME`), so processes with skewed clocks still agree on the
 * window. Keys of one token share a hash tag, so the scripts also run on
 * Redis Cluster.
 */
export const LIMITER_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), [
  'rateAcquire',
  'rateDone',
  'rateObserve',
  'ratePause',
  'rateQuota',
]);

export interface LimiterKeys {
  readonly window: string;
  readonly pause: string;
  readonly quota: string;
  readonly cap: string;
}

export interface ObserveArgs {
  burst: number;
  windowMs: number;
  limit: number | '';
  remaining: number | '';
  acquiredAtMs: number;
  phantomPrefix: string;
  quotaRemaining: number | '';
  quotaResetMs: number | '';
}

/** The limiter's scripts bound to one client and one token's keys. */
export function limiterScripts(redis: Redis | Cluster, keys: LimiterKeys) {
  const run = LIMITER_SCRIPTS.on(redis);
  return {
    /** `[1, 0, now]` granted, `[0, wait_ms, now]` wait, `[-1, pttl, now]` paused, `[-2, reset_ms, now]` quota. */
    acquire: (burst: number, windowMs: number, member: string, inflightMs: number) =>
      run.rateAcquire([keys.window, keys.pause, keys.quota, keys.cap], [burst, windowMs, member, inflightMs]) as Promise<[number, number, number]>,
    done: (member: string) => run.rateDone([keys.window], [member]) as Promise<1>,
    /** Returns the number of slots counted for requests the service saw beyond ours. */
    observe: (a: ObserveArgs) =>
      run.rateObserve([keys.window, keys.cap, keys.quota], [
        a.burst, a.windowMs, a.limit, a.remaining, a.acquiredAtMs, a.phantomPrefix, a.quotaRemaining, a.quotaResetMs,
      ]) as Promise<number>,
    pause: (ms: number) => run.ratePause([keys.pause], [ms]) as Promise<1>,
    quota: (resetMs: number) => run.rateQuota([keys.quota], [resetMs]) as Promise<1>,
  };
}
