import { createHash, randomUUID } from 'node:crypto';
import { BURST_WINDOW_MS } from '../spec/limits.js';
import { sleep as defaultSleep } from '../util/sleep.js';
import { QuotaExhaustedError } from './errors.js';

/** The service counts the burst limit per token over a 10-second window (spec, Limits). */
export { BURST_WINDOW_MS };

/** What an answer's rate-limit headers said. */
export interface RateLimitObservation {
  /** `X-RateLimit-Limit`. */
  limit?: number | undefined;
  /** `X-RateLimit-Remaining`. */
  remaining?: number | undefined;
  /** `X-Quota-Remaining` (absent on plans without a monthly cap). */
  quotaRemaining?: number | undefined;
  /** `X-Quota-Reset`. */
  quotaResetAt?: Date | undefined;
  /** Acquire time of the permit whose answer carried these headers. */
  acquiredAtMs: number;
}

/** A granted slot in the window. */
export interface Permit {
  /** Milliseconds spent waiting for the slot (pause, full window). */
  readonly waitedMs: number;
  /** Time the slot was granted (the limiter's clock). */
  readonly acquiredAtMs: number;
  /**
   * Marks the request finished (answer received or abandoned). Until then the slot
   * counts as "arriving at any moment", so it cannot slide out of the window while
   * the request is still travelling; afterwards it counts from this time, which is
   * never earlier than the service saw the request.
   */
  done(): Promise<void>;
}

/**
 * A limiter shared by every caller of one token. Implementations: in-process
 * ({@link createMemoryRateLimiter}) and Redis-backed across processes
 * (`createRedisRateLimiter`).
 */
export interface RateLimiter {
  /** Waits for a slot. Throws {@link QuotaExhaustedError} while the monthly quota is spent. */
  acquire(signal?: AbortSignal): Promise<Permit>;
  /** Adapts to the service's view (fewer remaining than we think → count the difference as used). */
  observe(o: RateLimitObservation): Promise<void>;
  /** After a burst 429: nobody sends until `ms` from now. */
  pause(ms: number): Promise<void>;
  /** The monthly quota is spent until `resetAt`. */
  exhaustQuota(resetAt: Date): Promise<void>;
}

export interface MemoryRateLimiterOptions {
  /** Calls allowed per 10 s window. */
  burst: number;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Longest a request can stay in flight (the request timeout); bounds stale in-flight slots. */
  inflightMs?: number;
  windowMs?: number;
}

/** SHA-256 of the token: the only form in which a token may appear in a key or a metric label. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Result of one admission attempt, shared by both implementations. */
export type Admission =
  | { kind: 'granted'; now: number }
  | { kind: 'wait'; ms: number; now: number }
  | { kind: 'quota'; resetAtMs: number; now: number };

/**
 * Shared admission loop: try, wait what the limiter says (at most `maxPollMs`
 * so a slot freed early is noticed), try again.
 */
export async function admit(
  tryOnce: () => Promise<Admission>,
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
  signal: AbortSignal | undefined,
  maxPollMs = 1_000,
): Promise<{ now: number; waitedMs: number }> {
  let waitedMs = 0;
  for (;;) {
    signal?.throwIfAborted();
    const a = await tryOnce();
    if (a.kind === 'granted') return { now: a.now, waitedMs };
    if (a.kind === 'quota') {
      throw new QuotaExhaustedError({
        status: 429,
        message: `monthly quota exhausted until ${new Date(a.resetAtMs).toISOString()} (known to the rate limiter)`,
        resetAt: new Date(a.resetAtMs),
      });
    }
    const ms = Math.max(1, Math.min(a.ms, maxPollMs));
    await sleep(ms, signal);
    waitedMs += ms;
  }
}

/**
 * In-process sliding-window limiter: the same rules as the Redis limiter for a
 * single process (no Redis given).
 */
export function createMemoryRateLimiter(opts: MemoryRateLimiterOptions): RateLimiter {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? defaultSleep;
  const windowMs = opts.windowMs ?? BURST_WINDOW_MS;
  const inflightMs = opts.inflightMs ?? 60_000;
  /** Slot scores: completion time, or acquire + inflightMs while in flight. */
  const slots = new Map<string, number>();
  let serverLimit = Infinity;
  let pauseUntil = 0;
  let quotaResetAt = 0;

  const limit = (): number => Math.min(opts.burst, serverLimit);
  const inWindow = (t: number): number[] => {
    for (const [id, s] of slots) if (s <= t - windowMs - inflightMs) slots.delete(id);
    return [...slots.values()].filter((s) => s > t - windowMs);
  };

  const tryOnce = async (id: string): Promise<Admission> => {
    const t = now();
    if (quotaResetAt > t) return { kind: 'quota', resetAtMs: quotaResetAt, now: t };
    if (pauseUntil > t) return { kind: 'wait', ms: pauseUntil - t, now: t };
    const live = inWindow(t);
    if (live.length < limit()) {
      slots.set(id, t + inflightMs);
      return { kind: 'granted', now: t };
    }
    const oldest = Math.min(...live);
    // An in-flight slot has a future score: poll shortly, it will be completed soon.
    return { kind: 'wait', ms: oldest > t ? 25 : oldest + windowMs - t, now: t };
  };

  return {
    async acquire(signal) {
      const id = randomUUID();
      const { now: acquiredAtMs, waitedMs } = await admit(() => tryOnce(id), sleep, signal);
      return {
        waitedMs,
        acquiredAtMs,
        async done() {
          const s = slots.get(id);
          const t = now();
          if (s !== undefined && s > t) slots.set(id, t);
        },
      };
    },
    async observe(o) {
      if (o.limit !== undefined && o.limit > 0) serverLimit = o.limit;
      if (o.quotaRemaining === 0 && o.quotaResetAt) quotaResetAt = Math.max(quotaResetAt, o.quotaResetAt.getTime());
      if (o.remaining === undefined) return;
      // Our slots that the service may have counted when it answered: every slot
      // whose (upper-bound) time lies after the acquire time minus the window.
      const ours = [...slots.values()].filter((s) => s > o.acquiredAtMs - windowMs).length;
      const serverUsed = limit() - o.remaining;
      const t = now();
      for (let i = 0; i < Math.min(serverUsed - ours, limit()); i++) slots.set(`phantom:${randomUUID()}`, t);
    },
    async pause(ms) {
      pauseUntil = Math.max(pauseUntil, now() + ms);
    },
    async exhaustQuota(resetAt) {
      quotaResetAt = Math.max(quotaResetAt, resetAt.getTime());
    },
  };
}
