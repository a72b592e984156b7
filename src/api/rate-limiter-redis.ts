import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { sleep as defaultSleep } from '../util/sleep.js';
import {
  BURST_WINDOW_MS,
  admit,
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
 */
export function createRedisRateLimiter(opts: RedisRateLimiterOptions): RateLimiter {
  const { redis } = opts;
  const sleep = opts.sleep ?? defaultSleep;
  const windowMs = opts.windowMs ?? BURST_WINDOW_MS;
  const inflightMs = opts.inflightMs ?? 60_000;
  const base = `${opts.prefix ?? 'switchyard:api-rate:'}{${tokenKey(opts.token)}}`;
  const keys = { window: `${base}:window`, pause: `${base}:pause`, quota: `${base}:quota`, cap: `${base}:cap` };
  const scripts = limiterScripts(redis, keys);

  const tryOnce = async (member: string): Promise<Admission> => {
    const r = await scripts.acquire(opts.burst, windowMs, member, inflightMs);
    const [status, value, now] = [num(r[0]), num(r[1]), num(r[2])];
    if (status === 1) return { kind: 'granted', now };
    if (status === -2) return { kind: 'quota', resetAtMs: value, now };
    return { kind: 'wait', ms: value, now };
  };

  // Waiters of this process queue up locally and only the first one polls Redis:
  // otherwise every waiting job wakes when a slot frees, and all but one poll in vain.
  let line: Promise<unknown> = Promise.resolve();

  return {
    async acquire(signal) {
      const member = randomUUID();
      const enqueued = Date.now();
      const turn = line.then(async () => {
        const queuedMs = Date.now() - enqueued;
        const r = await admit(() => tryOnce(member), sleep, signal);
        return { now: r.now, waitedMs: r.waitedMs + queuedMs };
      });
      line = turn.catch(() => undefined);
      const { now, waitedMs } = await turn;
      return {
        waitedMs,
        acquiredAtMs: now,
        async done() {
          await scripts.done(member);
        },
      };
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
