import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { sleep as defaultSleep } from '../util/index.js';
import {
  BURST_WINDOW_MS,
  LIMITER_PRIORITIES,
  SHARE_PASSED_OVER,
  admit,
  priorityLevel,
  tokenKey,
  type Admission,
  type RateLimiter,
} from './rate-limiter.js';
import { limiterScripts } from './rate-limiter-lua.js';

export interface RedisRateLimiterOptions {
  redis: Redis | Cluster;
  /** The API token; only its SHA-256 is used, in key names. */
  token: string;
  /** Calls allowed per 10 s window across every process using this token. */
  burst: number;
  /** Key prefix (default `switchyard:api-rate:`). */
  prefix?: string;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Longest a request can stay in flight (the request timeout). */
  inflightMs?: number;
  windowMs?: number;
  /**
   * A process whose waiters have not polled for this long is taken for dead and
   * its waiters stop holding their place (default 3000 ms; waiters poll at least
   * every second).
   */
  /**
   * Pace grants to normal and low once the window is a tenth full, so a saturating
   * backlog leaves a slot free for a high call every window/burst ms (see
   * `pacedWaitMs`). The worker's limiter does; default off (plain sliding window).
   */
  paceBelowHigh?: boolean;
  waiterStaleMs?: number;
}

/** One acquire waiting in this process. */
interface LocalWaiter {
  readonly member: string;
  /** Resolves when the waiter is the first of its level in this process. */
  readonly turn: Promise<void>;
  readonly wake: () => void;
  /** Its score in Redis once registered (undefined: the first poll registers it). */
  score: Promise<number | undefined>;
  /**
   * Settles once it is registered in Redis (or gone): the waiter behind it registers
   * only then, so Redis ranks this process's waiters in the order of its line.
   */
  readonly registered: Promise<void>;
  readonly markRegistered: () => void;
}

function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v);
}

/**
 * Sliding-window limiter shared by every process holding the same token: at
 * most `burst` requests per window, counted in Redis under
 * `<prefix>{<sha256(token)>}:*` (the hash tag keeps one token's keys on one
 * Cluster slot). A burst 429 sets a shared pause; a spent monthly quota is kept
 * under its own key until the reset time.
 *
 * Slots are granted in priority order across every process: each waiting
 * acquire is registered in Redis (`:waiters`, scored by level then enqueue
 * time), and a free slot goes to the oldest waiter of the highest level, with
 * a minimum share for lower levels ({@link SHARE_PASSED_OVER}). See
 * `lua/rateAcquire-7.lua`.
 */
export function createRedisRateLimiter(opts: RedisRateLimiterOptions): RateLimiter {
  const { redis } = opts;
  const sleep = opts.sleep ?? defaultSleep;
  const windowMs = opts.windowMs ?? BURST_WINDOW_MS;
  const inflightMs = opts.inflightMs ?? 60_000;
  const base = `${opts.prefix ?? 'switchyard:api-rate:'}{${tokenKey(opts.token)}}`;
  const staleMs = opts.waiterStaleMs ?? 3_000;
  const keys = {
    window: `${base}:window`,
    pause: `${base}:pause`,
    quota: `${base}:quota`,
    cap: `${base}:cap`,
    waiters: `${base}:waiters`,
    seen: `${base}:seen`,
    share: `${base}:share`,
  };
  const scripts = limiterScripts(redis, keys);
  /** This limiter's id in waiter names (`<proc>:<seq>`): how Redis tells its waiters' liveness. */
  const proc = randomUUID();
  let seq = 0;

  const tryOnce = async (member: string, level: number, score: { v: number | undefined }): Promise<Admission> => {
    const r = await scripts.acquire({
      burst: opts.burst,
      windowMs,
      member,
      inflightMs,
      level,
      score: score.v ?? '',
      proc,
      staleMs,
      due: SHARE_PASSED_OVER,
      pace: opts.paceBelowHigh ? 1 : 0,
    });
    const [status, value, now, s] = [num(r[0]), num(r[1]), num(r[2]), num(r[3])];
    if (s > 0) score.v = s;
    if (status === 1) return { kind: 'granted', now };
    if (status === -2) return { kind: 'quota', resetAtMs: value, now };
    return { kind: 'wait', ms: value, now };
  };

  // Waiters of this process queue up locally, one line per level, and only the
  // first of each line polls Redis: otherwise every waiting job wakes when a slot
  // frees, and all but one poll in vain. The others are registered in Redis
  // (rateEnqueue) so they keep their place in the order across processes.
  const lines: LocalWaiter[][] = LIMITER_PRIORITIES.map(() => []);

  const waitTurn = (w: LocalWaiter, signal: AbortSignal | undefined): Promise<void> => {
    if (!signal) return w.turn;
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      void w.turn.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  };

  return {
    async acquire(signal, priority) {
      signal?.throwIfAborted();
      const level = priorityLevel(priority);
      const line = lines[level] as LocalWaiter[];
      const member = `${proc}:${(seq++).toString(36).padStart(10, '0')}`;
      let wake!: () => void;
      let markRegistered!: () => void;
      const turn = new Promise<void>((r) => {
        wake = r;
      });
      const registered = new Promise<void>((r) => {
        markRegistered = r;
      });
      const w: LocalWaiter = { member, turn, wake, score: Promise.resolve(undefined), registered, markRegistered };
      const before = line.at(-1);
      /** Granted or given up: a waiter not yet registered then never registers. */
      let settled = false;
      line.push(w);
      const enqueued = Date.now();
      if (!before) w.wake();
      else {
        // Registered after the waiter ahead of it, never before: the first of a line registers with
        // its first poll, and a waiter behind it whose enqueue reached Redis first would rank ahead of
        // it there. Redis would then keep a free slot for a waiter that does not poll while the one
        // polling is told to wait: the slot stays unused until the window turns (the pacing showed it).
        const entered = before.registered.then(async () =>
          settled ? undefined : num(await scripts.enqueue(member, level, proc, staleMs)),
        );
        w.score = entered.catch(() => undefined);
        // Registered once its entry is in Redis (or it is gone); after a failed enqueue, with its first poll.
        void entered.then(markRegistered, () => undefined);
      }
      let granted = false;
      try {
        await waitTurn(w, signal);
        const queuedMs = Date.now() - enqueued;
        const score = { v: await w.score };
        let polled = false;
        const r = await admit(
          async () => {
            try {
              return await tryOnce(member, level, score);
            } finally {
              if (!polled) {
                polled = true;
                markRegistered();
              }
            }
          },
          sleep,
          signal,
        );
        granted = true;
        return {
          waitedMs: r.waitedMs + queuedMs,
          acquiredAtMs: r.now,
          async done() {
            await scripts.done(member);
          },
        };
      } finally {
        settled = true;
        const i = line.indexOf(w);
        if (i >= 0) line.splice(i, 1);
        if (i === 0) line[0]?.wake();
        // After its registration, if any, has reached Redis (else the entry would come back).
        // Best effort: a waiter left behind is dropped once its process stops polling.
        if (!granted) void w.score.then(() => scripts.leave(member)).catch(() => undefined);
        // Never before the waiter ahead has registered: its score settles only after that.
        void w.score.then(markRegistered);
      }
    },
    async observe(o) {
      await scripts.observe({
        burst: opts.burst,
        windowMs,
        limit: o.limit ?? '',
        remaining: o.remaining ?? '',
        acquiredAtMs: o.acquiredAtMs,
        phantomPrefix: `phantom:${randomUUID()}`,
        quotaRemaining: o.quotaRemaining ?? '',
        quotaResetMs: o.quotaResetAt ? o.quotaResetAt.getTime() : '',
      });
    },
    async pause(ms) {
      if (ms > 0) await scripts.pause(Math.ceil(ms));
    },
    async exhaustQuota(resetAt) {
      await scripts.quota(resetAt.getTime());
    },
  };
}
