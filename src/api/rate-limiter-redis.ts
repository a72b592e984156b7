import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { sleep as defaultSleep } from '../util/index.js';
import {
  BURST_WINDOW_MS,
  LIMITER_PRIORITIES,
  priorityLevel,
  tokenKey,
  type LimiterPriority,
  type Permit,
  type RateLimitObservation,
  type RateLimiter,
} from './rate-limiter.js';
import { SHARE_PASSED_OVER, admit, type Admission } from './rate-limiter-rules.js';
import { limiterScripts } from './rate-limiter-lua.js';
import { joinLine, leaveLine, waitTurn, type LocalWaiter, type ProcessLines } from './rate-limiter-redis-waiters.js';

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

/** The state of one Redis limiter in this process. */
interface RedisLimiter extends ProcessLines {
  readonly opts: RedisRateLimiterOptions;
  readonly scripts: ReturnType<typeof limiterScripts>;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly windowMs: number;
  readonly inflightMs: number;
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
  const l = redisLimiter(opts);
  return {
    acquire: (signal, priority) => acquireShared(l, signal, priority),
    observe: (o) => observeShared(l, o),
    async pause(ms) {
      if (ms > 0) await l.scripts.pause(Math.ceil(ms));
    },
    async exhaustQuota(resetAt) {
      await l.scripts.quota(resetAt.getTime());
    },
  };
}

function redisLimiter(opts: RedisRateLimiterOptions): RedisLimiter {
  const base = `${opts.prefix ?? 'switchyard:api-rate:'}{${tokenKey(opts.token)}}`;
  const keys = {
    window: `${base}:window`,
    pause: `${base}:pause`,
    quota: `${base}:quota`,
    cap: `${base}:cap`,
    waiters: `${base}:waiters`,
    seen: `${base}:seen`,
    share: `${base}:share`,
  };
  return {
    opts,
    scripts: limiterScripts(opts.redis, keys),
    sleep: opts.sleep ?? defaultSleep,
    windowMs: opts.windowMs ?? BURST_WINDOW_MS,
    inflightMs: opts.inflightMs ?? 60_000,
    staleMs: opts.waiterStaleMs ?? 3_000,
    proc: randomUUID(),
    seq: 0,
    lines: LIMITER_PRIORITIES.map(() => []),
  };
}

async function acquireShared(l: RedisLimiter, signal: AbortSignal | undefined, priority: LimiterPriority | undefined): Promise<Permit> {
  signal?.throwIfAborted();
  const level = priorityLevel(priority);
  const w = joinLine(l, level);
  const enqueued = Date.now();
  let granted = false;
  try {
    await waitTurn(w, signal);
    const queuedMs = Date.now() - enqueued;
    const r = await pollForSlot(l, w, level, signal);
    granted = true;
    return {
      waitedMs: r.waitedMs + queuedMs,
      acquiredAtMs: r.now,
      async done() {
        await l.scripts.done(w.member);
      },
    };
  } finally {
    leaveLine(l, w, level, granted);
  }
}

/** Polls Redis for a slot until granted, as the first of its line; its first poll registers it. */
async function pollForSlot(
  l: RedisLimiter,
  w: LocalWaiter,
  level: number,
  signal: AbortSignal | undefined,
): Promise<{ now: number; waitedMs: number }> {
  const score = { v: await w.score };
  let polled = false;
  return admit(
    async () => {
      try {
        return await tryAcquire(l, w.member, level, score);
      } finally {
        if (!polled) {
          polled = true;
          w.markRegistered();
        }
      }
    },
    l.sleep,
    signal,
  );
}

/** One poll of the acquire script; keeps the score Redis gave the waiter. */
async function tryAcquire(l: RedisLimiter, member: string, level: number, score: { v: number | undefined }): Promise<Admission> {
  const r = await l.scripts.acquire({
    burst: l.opts.burst,
    windowMs: l.windowMs,
    member,
    inflightMs: l.inflightMs,
    level,
    score: score.v ?? '',
    proc: l.proc,
    staleMs: l.staleMs,
    due: SHARE_PASSED_OVER,
    pace: l.opts.paceBelowHigh ? 1 : 0,
  });
  const [status, value, now, s] = [num(r[0]), num(r[1]), num(r[2]), num(r[3])];
  if (s > 0) score.v = s;
  if (status === 1) return { kind: 'granted', now };
  if (status === -2) return { kind: 'quota', resetAtMs: value, now };
  return { kind: 'wait', ms: value, now };
}

async function observeShared(l: RedisLimiter, o: RateLimitObservation): Promise<void> {
  await l.scripts.observe({
    burst: l.opts.burst,
    windowMs: l.windowMs,
    limit: o.limit ?? '',
    remaining: o.remaining ?? '',
    acquiredAtMs: o.acquiredAtMs,
    phantomPrefix: `phantom:${randomUUID()}`,
    quotaRemaining: o.quotaRemaining ?? '',
    quotaResetMs: o.quotaResetAt ? o.quotaResetAt.getTime() : '',
  });
}
