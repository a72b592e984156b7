import type { Cluster, Redis } from 'ioredis';
import { LuaScripts } from '../util/index.js';

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
  'rateEnqueue',
  'rateObserve',
  'ratePause',
  'rateQuota',
]);

export interface LimiterKeys {
  readonly window: string;
  readonly pause: string;
  readonly quota: string;
  readonly cap: string;
  /** Sorted set of waiters, scored `level * 1e13 + enqueue ms`: the grant order. */
  readonly waiters: string;
  /** Sorted set of processes with waiters, scored by when one of them last polled. */
  readonly seen: string;
  /** Hash: per level, grants in a row that passed the level over while it had waiters. */
  readonly share: string;
}

export interface AcquireArgs {
  burst: number;
  windowMs: number;
  member: string;
  inflightMs: number;
  level: number;
  /** The waiter's score from an earlier call; '' on the first. */
  score: number | '';
  proc: string;
  staleMs: number;
  /** Grants in a row after which a waiting level is due (minimum share). */
  due: number;
  /** 1: pace grants below high once the window is a tenth full (see pacedWaitMs); 0: don't. */
  pace: 0 | 1;
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
    /**
     * `[1, 0, now, score]` granted, `[0, wait_ms, now, score]` wait, `[-1, pttl, now, score]` paused,
     * `[-2, reset_ms, now, 0]` quota (the waiter is removed). `score`: the waiter's place in the grant order.
     */
    acquire: (a: AcquireArgs) =>
      run.rateAcquire(
        [keys.window, keys.pause, keys.quota, keys.cap, keys.waiters, keys.seen, keys.share],
        [a.burst, a.windowMs, a.member, a.inflightMs, a.level, a.score, a.proc, a.staleMs, a.due, a.pace],
      ) as Promise<[number, number, number, number]>,
    /** Registers a waiter queued behind another of its process and level; returns its score. */
    enqueue: (member: string, level: number, proc: string, staleMs: number) =>
      run.rateEnqueue([keys.waiters, keys.seen], [member, level, proc, staleMs]) as Promise<number>,
    /** Removes a waiter that gave up (aborted, failed). */
    leave: (member: string) => redis.zrem(keys.waiters, member),
    done: (member: string) => run.rateDone([keys.window], [member]) as Promise<1>,
    /** Returns the number of slots counted for requests the service saw beyond ours. */
    observe: (a: ObserveArgs) =>
      run.rateObserve(
        [keys.window, keys.cap, keys.quota],
        [a.burst, a.windowMs, a.limit, a.remaining, a.acquiredAtMs, a.phantomPrefix, a.quotaRemaining, a.quotaResetMs],
      ) as Promise<number>,
    pause: (ms: number) => run.ratePause([keys.pause], [ms]) as Promise<1>,
    quota: (resetMs: number) => run.rateQuota([keys.quota], [resetMs]) as Promise<1>,
  };
}
