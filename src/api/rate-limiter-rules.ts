import { QuotaExhaustedError } from './errors.js';

// The rules both limiters (rate-limiter.ts, rate-limiter-redis.ts) grant slots by: the order
// of levels with the minimum share of lower ones, and the pacing below high (pure functions;
// `lua/rateAcquire-7.lua` applies the same rules in Redis); and their shared admission loop.

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
