import { createHash, randomUUID } from 'node:crypto';
import { PRIORITIES, type Priority, sleep as defaultSleep } from '../util/index.js';
import { BURST_WINDOW_MS } from '../spec/index.js';
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
 * Priority of an acquire. A free slot goes to the oldest waiter of the highest
 * level that has waiters (FIFO within a level), except that a lower level is
 * never starved: see {@link SHARE_PASSED_OVER}.
 */
export type LimiterPriority = Priority;

/** Every priority, highest first; a priority's index is its level (0 = high). */
export const LIMITER_PRIORITIES: readonly LimiterPriority[] = PRIORITIES;

/** Level of a priority: 0 for `high`, 1 for `normal`, 2 for `low`. Unknown values count as `normal`. */
export function priorityLevel(p: LimiterPriority | undefined): number {
  const i = LIMITER_PRIORITIES.indexOf(p ?? 'normal');
  return i < 0 ? 1 : i;
}

/**
 * Minimum share of lower levels. A level that has waiters and has been passed
 * over this many grants in a row (grants that went to other levels while it
 * waited) takes the next grant; when two levels are due at once the higher one
 * goes first, so the other is served one grant later. A waiting level is
 * therefore never passed over more than 9 grants in a row: it gets at least 1
 * of every 10 grants (2 of every 20, 10 % of the budget) however busy the
 * higher levels keep the limiter. A level without waiters has its count reset.
 * The Redis script (`lua/rateAcquire-7.lua`) applies the same rule.
 */
export const SHARE_PASSED_OVER = 8;

/**
 * The level that takes the next grant: the highest level that is due (see
 * {@link SHARE_PASSED_OVER}), else the highest level with waiters; undefined
 * when nobody waits. `waiting[l]`: waiters of level l; `passed[l]`: grants in
 * a row that passed level l over.
 */
export function nextGrantLevel(waiting: readonly number[], passed: readonly number[]): number | undefined {
  for (let l = 0; l < waiting.length; l++) if ((waiting[l] ?? 0) > 0 && (passed[l] ?? 0) >= SHARE_PASSED_OVER) return l;
  for (let l = 0; l < waiting.length; l++) if ((waiting[l] ?? 0) > 0) return l;
  return undefined;
}

/** The passed-over counts after a grant to `level`; `waiting` counts the waiters left after it. */
export function afterGrant(passed: readonly number[], level: number, waiting: readonly number[]): number[] {
  return waiting.map((w, l) => (l === level || w === 0 ? 0 : (passed[l] ?? 0) + 1));
}

/**
 * Whether the waiter at `pos` (0 = oldest) of `level` is among the next `free`
 * grants, in the order {@link nextGrantLevel} gives them.
 */
export function amongNextGrants(free: number, waiting: readonly number[], passed: readonly number[], level: number, pos: number): boolean {
  const left = [...waiting];
  let p = [...passed];
  for (let k = 0; k < free; k++) {
    const l = nextGrantLevel(left, p);
    if (l === undefined) return false;
    if (l === level && (waiting[l] ?? 0) - (left[l] ?? 0) === pos) return true;
    left[l] = (left[l] ?? 0) - 1;
    p = afterGrant(p, l, left);
  }
  return false;
}

/**
 * A limiter shared by every caller of one token. Implementations: in-process
 * ({@link createMemoryRateLimiter}) and Redis-backed across processes
 * (`createRedisRateLimiter`).
 */
export interface RateLimiter {
  /**
   * Waits for a slot. Throws {@link QuotaExhaustedError} while the monthly quota is spent.
   * Slots go to waiters in `priority` order (default `normal`), FIFO within a level,
   * with a minimum share for lower levels ({@link SHARE_PASSED_OVER}).
   */
  acquire(signal?: AbortSignal, priority?: LimiterPriority): Promise<Permit>;
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
  /** Pace grants to normal and low once the window is a tenth full ({@link pacedWaitMs}); default off. */
  paceBelowHigh?: boolean;
}

/** SHA-256 of the token: the only form in which a token may appear in a key or a metric label. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Result of one admission attempt, shared by both implementations. */
export type Admission =
  { kind: 'granted'; now: number } | { kind: 'wait'; ms: number; now: number } | { kind: 'quota'; resetAtMs: number; now: number };

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
 * Pacing below high: once the window is a tenth full, grants to `normal` and
 * `low` are spaced `windowMs / limit` apart on average (333 ms at 30 per
 * 10 s), across both levels: GCRA, with `tat` the theoretical time of the next
 * such grant and one slot of catch-up allowed. A saturating backlog then
 * spends the budget evenly rather than in a burst at each turn of the window,
 * so a slot frees for a `high` call every `windowMs / limit`; the pace is the
 * budget's own rate, so a backlog alone still uses all of it, but for one slot
 * of a window of ten or more, which is kept for `high`: a customer's first call
 * never waits. `high` is never paced. Returns how long the caller must still
 * wait (0: it may take a slot).
 */
export function pacedWaitMs(level: number, inWindow: number, limit: number, windowMs: number, now: number, tat: number): number {
  if (level === 0 || inWindow * 10 < limit) return 0;
  const pace = Math.floor(windowMs / limit);
  if (tat - now > pace) return tat - pace - now;
  // One slot of a window of ten or more is kept for high: poll again a pace later.
  return limit >= 10 && inWindow >= limit - 1 ? pace : 0;
}

/** The theoretical time of the next paced grant after one granted at `now`. */
export function nextTat(tat: number, now: number, limit: number, windowMs: number): number {
  return Math.max(tat, now) + Math.floor(windowMs / limit);
}

/**
 * In-process sliding-window limiter: the same rules as the Redis limiter for a
 * single process (no Redis given), priority order and minimum share included.
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
  /** Waiting acquires by level, oldest first, and the passed-over count of each level. */
  const waiters: string[][] = LIMITER_PRIORITIES.map(() => []);
  let passed: number[] = LIMITER_PRIORITIES.map(() => 0);
  /** The theoretical time of the next paced grant (see {@link pacedWaitMs}). */
  let tat = 0;

  const limit = (): number => Math.min(opts.burst, serverLimit);
  const inWindow = (t: number): number[] => {
    for (const [id, s] of slots) if (s <= t - windowMs - inflightMs) slots.delete(id);
    return [...slots.values()].filter((s) => s > t - windowMs);
  };

  const tryOnce = async (id: string, level: number): Promise<Admission> => {
    const t = now();
    if (quotaResetAt > t) return { kind: 'quota', resetAtMs: quotaResetAt, now: t };
    if (pauseUntil > t) return { kind: 'wait', ms: pauseUntil - t, now: t };
    const live = inWindow(t);
    const free = limit() - live.length;
    const line = waiters[level] as string[];
    const paced = free > 0 && opts.paceBelowHigh ? pacedWaitMs(level, live.length, limit(), windowMs, t, tat) : 0;
    if (paced > 0) return { kind: 'wait', ms: paced, now: t };
    if (
      free > 0 &&
      amongNextGrants(
        free,
        waiters.map((w) => w.length),
        passed,
        level,
        line.indexOf(id),
      )
    ) {
      line.splice(line.indexOf(id), 1);
      passed = afterGrant(
        passed,
        level,
        waiters.map((w) => w.length),
      );
      if (level > 0 && opts.paceBelowHigh) tat = nextTat(tat, t, limit(), windowMs);
      slots.set(id, t + inflightMs);
      return { kind: 'granted', now: t };
    }
    // Full, or the free slots belong to waiters ahead of this one: poll when the
    // oldest slot leaves the window. An in-flight slot has a future score: poll
    // shortly, it will be completed soon.
    if (live.length === 0) return { kind: 'wait', ms: 25, now: t };
    const oldest = Math.min(...live);
    return { kind: 'wait', ms: oldest > t ? 25 : Math.max(1, oldest + windowMs - t), now: t };
  };

  return {
    async acquire(signal, priority) {
      signal?.throwIfAborted();
      const id = randomUUID();
      const level = priorityLevel(priority);
      const line = waiters[level] as string[];
      line.push(id);
      let admitted: { now: number; waitedMs: number };
      try {
        admitted = await admit(() => tryOnce(id, level), sleep, signal);
      } finally {
        const i = line.indexOf(id);
        if (i >= 0) line.splice(i, 1);
      }
      const { now: acquiredAtMs, waitedMs } = admitted;
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
