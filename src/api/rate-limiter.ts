import { createHash, randomUUID } from 'node:crypto';
import { PRIORITIES, type Priority, sleep as defaultSleep } from '../util/index.js';
import { BURST_WINDOW_MS } from '../spec/index.js';
import { admit, afterGrant, amongNextGrants, nextTat, pacedWaitMs, type Admission } from './rate-limiter-rules.js';

export { SHARE_PASSED_OVER } from './rate-limiter-rules.js';

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

/** The state of one in-process limiter. */
interface MemoryLimiter {
  readonly opts: MemoryRateLimiterOptions;
  readonly now: () => number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly windowMs: number;
  readonly inflightMs: number;
  /** Slot scores: completion time, or acquire + inflightMs while in flight. */
  readonly slots: Map<string, number>;
  serverLimit: number;
  pauseUntil: number;
  quotaResetAt: number;
  /** Waiting acquires by level, oldest first, and the passed-over count of each level. */
  readonly waiters: string[][];
  passed: number[];
  /** The theoretical time of the next paced grant (see {@link pacedWaitMs}). */
  tat: number;
}

/**
 * In-process sliding-window limiter: the same rules as the Redis limiter for a
 * single process (no Redis given), priority order and minimum share included.
 */
export function createMemoryRateLimiter(opts: MemoryRateLimiterOptions): RateLimiter {
  const m: MemoryLimiter = {
    opts,
    now: opts.now ?? Date.now,
    sleep: opts.sleep ?? defaultSleep,
    windowMs: opts.windowMs ?? BURST_WINDOW_MS,
    inflightMs: opts.inflightMs ?? 60_000,
    slots: new Map<string, number>(),
    serverLimit: Infinity,
    pauseUntil: 0,
    quotaResetAt: 0,
    waiters: LIMITER_PRIORITIES.map(() => []),
    passed: LIMITER_PRIORITIES.map(() => 0),
    tat: 0,
  };
  return {
    acquire: (signal, priority) => acquireSlot(m, signal, priority),
    observe: async (o) => observeAnswer(m, o),
    async pause(ms) {
      m.pauseUntil = Math.max(m.pauseUntil, m.now() + ms);
    },
    async exhaustQuota(resetAt) {
      m.quotaResetAt = Math.max(m.quotaResetAt, resetAt.getTime());
    },
  };
}

function limitOf(m: MemoryLimiter): number {
  return Math.min(m.opts.burst, m.serverLimit);
}

/** The scores of the slots in the window at `t`, after dropping the ones past any use. */
function slotsInWindow(m: MemoryLimiter, t: number): number[] {
  for (const [id, s] of m.slots) if (s <= t - m.windowMs - m.inflightMs) m.slots.delete(id);
  return [...m.slots.values()].filter((s) => s > t - m.windowMs);
}

async function acquireSlot(m: MemoryLimiter, signal: AbortSignal | undefined, priority: LimiterPriority | undefined): Promise<Permit> {
  signal?.throwIfAborted();
  const id = randomUUID();
  const level = priorityLevel(priority);
  const line = m.waiters[level] as string[];
  line.push(id);
  let admitted: { now: number; waitedMs: number };
  try {
    admitted = await admit(() => tryAdmit(m, id, level), m.sleep, signal);
  } finally {
    const i = line.indexOf(id);
    if (i >= 0) line.splice(i, 1);
  }
  const { now: acquiredAtMs, waitedMs } = admitted;
  return {
    waitedMs,
    acquiredAtMs,
    async done() {
      const s = m.slots.get(id);
      const t = m.now();
      if (s !== undefined && s > t) m.slots.set(id, t);
    },
  };
}

/** One admission attempt of waiter `id`: granted when a free slot is its turn, else how long to wait. */
async function tryAdmit(m: MemoryLimiter, id: string, level: number): Promise<Admission> {
  const t = m.now();
  if (m.quotaResetAt > t) return { kind: 'quota', resetAtMs: m.quotaResetAt, now: t };
  if (m.pauseUntil > t) return { kind: 'wait', ms: m.pauseUntil - t, now: t };
  const live = slotsInWindow(m, t);
  const free = limitOf(m) - live.length;
  const line = m.waiters[level] as string[];
  const paced = free > 0 && m.opts.paceBelowHigh ? pacedWaitMs(level, live.length, limitOf(m), m.windowMs, t, m.tat) : 0;
  if (paced > 0) return { kind: 'wait', ms: paced, now: t };
  if (
    free > 0 &&
    amongNextGrants(
      free,
      m.waiters.map((w) => w.length),
      m.passed,
      level,
      line.indexOf(id),
    )
  ) {
    grantSlot(m, id, level, t);
    return { kind: 'granted', now: t };
  }
  // Full, or the free slots belong to waiters ahead of this one: poll when the
  // oldest slot leaves the window. An in-flight slot has a future score: poll
  // shortly, it will be completed soon.
  if (live.length === 0) return { kind: 'wait', ms: 25, now: t };
  const oldest = Math.min(...live);
  return { kind: 'wait', ms: oldest > t ? 25 : Math.max(1, oldest + m.windowMs - t), now: t };
}

/** Gives waiter `id` a slot (in flight from `t`) and counts the grant for the share and the pacing. */
function grantSlot(m: MemoryLimiter, id: string, level: number, t: number): void {
  const line = m.waiters[level] as string[];
  line.splice(line.indexOf(id), 1);
  m.passed = afterGrant(
    m.passed,
    level,
    m.waiters.map((w) => w.length),
  );
  if (level > 0 && m.opts.paceBelowHigh) m.tat = nextTat(m.tat, t, limitOf(m), m.windowMs);
  m.slots.set(id, t + m.inflightMs);
}

/** Adapts to an answer's headers: the service's limit, a spent quota, and slots it counted that we did not. */
function observeAnswer(m: MemoryLimiter, o: RateLimitObservation): void {
  if (o.limit !== undefined && o.limit > 0) m.serverLimit = o.limit;
  if (o.quotaRemaining === 0 && o.quotaResetAt) m.quotaResetAt = Math.max(m.quotaResetAt, o.quotaResetAt.getTime());
  if (o.remaining === undefined) return;
  // Our slots that the service may have counted when it answered: every slot
  // whose (upper-bound) time lies after the acquire time minus the window.
  const ours = [...m.slots.values()].filter((s) => s > o.acquiredAtMs - m.windowMs).length;
  const serverUsed = limitOf(m) - o.remaining;
  const t = m.now();
  for (let i = 0; i < Math.min(serverUsed - ours, limitOf(m)); i++) m.slots.set(`phantom:${randomUUID()}`, t);
}
