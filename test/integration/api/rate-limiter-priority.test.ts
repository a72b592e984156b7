import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  SHARE_PASSED_OVER,
  createRedisRateLimiter,
  tokenKey,
  type LimiterPriority,
  type RateLimiter,
  type RedisRateLimiterOptions,
} from '../../../src/api/index.js';
import { maxInWindow } from '../../../bench/lib/windows.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { waitFor } from '../../support/wait.js';

// Each limiter below has its own connection: one limiter per connection stands for one process.
const conns: Redis[] = [];
const connect = (): Redis => {
  const r = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
  conns.push(r);
  return r;
};
afterAll(async () => {
  await Promise.all(conns.filter((c) => c.status !== 'end').map((c) => c.quit()));
});

const TOKEN = 'sbx_priority_token';

function setup(o: Partial<RedisRateLimiterOptions> & { burst: number; windowMs: number }) {
  const prefix = `${uniquePrefix('rlp')}:`;
  const admin = connect();
  const waitersKey = `${prefix}{${tokenKey(TOKEN)}}:waiters`;
  const limiter = (extra: Partial<RedisRateLimiterOptions> = {}) =>
    createRedisRateLimiter({ redis: connect(), token: TOKEN, prefix, ...o, ...extra });
  /** Waiters registered in Redis. */
  const waiting = () => admin.zcard(waitersKey);
  /**
   * Takes every slot of the window (the requests finish at once), `gapMs` apart, so
   * that the slots free one at a time and each free slot has one rightful taker.
   */
  const fill = async (rl: RateLimiter, gapMs = 0) => {
    for (let i = 0; i < o.burst; i++) {
      if (i > 0 && gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      await (await rl.acquire()).done();
    }
  };
  return { prefix, admin, waitersKey, limiter, waiting, fill };
}

/**
 * Starts an acquire and waits until Redis holds one more waiter (so the order of registration is known).
 * Returns the grant as `{ granted }` (an async function returning the promise itself would wait for it).
 */
async function enqueue(
  s: ReturnType<typeof setup>,
  rl: RateLimiter,
  name: string,
  priority: LimiterPriority,
  order: string[],
  signal?: AbortSignal,
): Promise<{ granted: Promise<void> }> {
  const before = await s.waiting();
  const granted = rl.acquire(signal, priority).then(async (p) => {
    order.push(name);
    await p.done();
  });
  granted.catch(() => undefined);
  await waitFor(async () => (await s.waiting()) > before, 5_000, 2);
  await new Promise((r) => setTimeout(r, 2)); // FIFO is by enqueue millisecond on the server clock
  return { granted };
}

describe('Redis rate limiter: priority order across processes', () => {
  it('a high waiter that arrives after many low waiters (of other processes) takes the next free slot', async () => {
    const s = setup({ burst: 2, windowMs: 1_000 });
    const [a, b, c] = [s.limiter(), s.limiter(), s.limiter()];
    await s.fill(a, 150);
    const order: string[] = [];
    const ctrl = new AbortController();
    const lows: Promise<void>[] = [];
    for (let i = 0; i < 12; i++) lows.push((await enqueue(s, i % 2 ? a : b, `low${i}`, 'low', order, ctrl.signal)).granted);
    const grantedBefore = order.length;
    expect(grantedBefore).toBeLessThan(12);
    await enqueue(s, c, 'high', 'high', order);
    await waitFor(() => order.includes('high'));
    expect(order.indexOf('high')).toBe(grantedBefore);
    ctrl.abort(new Error('test over'));
    await Promise.allSettled(lows);
    await waitFor(async () => (await s.waiting()) === 0, 5_000);
  });

  it('within a level, slots go first come first served across processes; higher levels first', async () => {
    // burst 1: one slot frees at a time, so the order of the grants is the order of the waiters.
    const s = setup({ burst: 1, windowMs: 300 });
    const rls = [s.limiter(), s.limiter(), s.limiter()];
    await s.fill(rls[0] as RateLimiter);
    const order: string[] = [];
    const all: Promise<void>[] = [];
    const plan: [string, LimiterPriority][] = [
      ['n0', 'normal'],
      ['l0', 'low'],
      ['n1', 'normal'],
      ['n2', 'normal'],
      ['l1', 'low'],
      ['h0', 'high'],
      ['n3', 'normal'],
      ['h1', 'high'],
    ];
    for (const [i, [name, p]] of plan.entries()) all.push((await enqueue(s, rls[i % 3] as RateLimiter, name, p, order)).granted);
    await Promise.all(all);
    // Few enough grants that the minimum share never applies.
    expect(order).toEqual(['h0', 'h1', 'n0', 'n1', 'n2', 'n3', 'l0', 'l1']);
  });

  it(`minimum share: under constant high demand, low waiters still get >= 1 of every ${SHARE_PASSED_OVER + 2} grants, and the window is never exceeded`, async () => {
    const burst = 5;
    const windowMs = 250;
    const s = setup({ burst, windowMs });
    const rls = [s.limiter(), s.limiter(), s.limiter()];
    const grants: { p: LimiterPriority; at: number }[] = [];
    const total = 80;
    const worker = async (rl: RateLimiter, p: LimiterPriority): Promise<void> => {
      while (grants.length < total) {
        const permit = await rl.acquire(undefined, p);
        grants.push({ p, at: permit.acquiredAtMs });
        await permit.done();
      }
    };
    const workers: Promise<void>[] = [];
    for (const rl of rls) for (let i = 0; i < 4; i++) workers.push(worker(rl, 'high')); // 12 high waiters for 5 slots
    workers.push(worker(rls[0] as RateLimiter, 'low'), worker(rls[1] as RateLimiter, 'low'));
    await Promise.all(workers);
    const counted = grants.slice(0, total);
    const low = counted.filter((g) => g.p === 'low').length;
    // The rule gives 1 of every 10 at least (1 of every 9 with one lower level waiting); one share of slack.
    expect(low).toBeGreaterThanOrEqual(Math.floor(total / (SHARE_PASSED_OVER + 2)) - 1);
    expect(counted.filter((g) => g.p === 'high').length).toBeGreaterThan(total / 2);
    expect(
      maxInWindow(
        grants.map((g) => g.at),
        windowMs,
      ),
    ).toBeLessThanOrEqual(burst);
  }, 30_000);

  it('a waiter whose process died stops holding its place once the process is no longer seen polling', async () => {
    const s = setup({ burst: 1, windowMs: 300 });
    const alive = s.limiter();
    const doomedRedis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 1 });
    const doomed = createRedisRateLimiter({ redis: doomedRedis, token: TOKEN, prefix: s.prefix, burst: 1, windowMs: 300 });
    await s.fill(alive);
    const dead = doomed.acquire(undefined, 'high');
    dead.catch(() => undefined);
    await waitFor(async () => (await s.waiting()) === 1, 5_000, 2);
    const [deadMember] = await s.admin.zrange(s.waitersKey, '0', '-1');
    doomedRedis.disconnect(); // killed: it neither polls nor leaves
    await expect(dead).rejects.toThrow();
    expect(await s.admin.zscore(s.waitersKey, deadMember as string)).not.toBeNull(); // still registered, ahead of everyone
    const p = await alive.acquire(undefined, 'low');
    await p.done();
    expect(p.waitedMs).toBeGreaterThan(0);
    expect(await s.admin.zscore(s.waitersKey, deadMember as string)).toBeNull();
  }, 20_000);

  it('an aborted acquire leaves the order at once (first of its line or queued behind it)', async () => {
    // Dead-waiter detection is off for this test (60 s): only the abort can remove a waiter.
    const s = setup({ burst: 1, windowMs: 400, waiterStaleMs: 60_000 });
    const [a, b] = [s.limiter(), s.limiter()];
    await s.fill(a);
    const order: string[] = [];
    const first = new AbortController();
    const second = new AbortController();
    const { granted: h0 } = await enqueue(s, a, 'h0', 'high', order, first.signal); // polls Redis
    const { granted: h1 } = await enqueue(s, a, 'h1', 'high', order, second.signal); // queued in process a behind h0
    const { granted: low } = await enqueue(s, b, 'low', 'low', order);
    expect(await s.waiting()).toBe(3);
    second.abort(new Error('h1 gave up'));
    await expect(h1).rejects.toThrow('h1 gave up');
    await waitFor(async () => (await s.waiting()) === 2, 5_000, 5);
    first.abort(new Error('h0 gave up'));
    await expect(h0).rejects.toThrow('h0 gave up');
    await waitFor(async () => (await s.waiting()) === 1, 5_000, 5);
    await low;
    expect(order).toEqual(['low']);
    expect(await s.waiting()).toBe(0);
  });

  it('a free slot goes to the waiter that polls: waiters of one process rank in Redis in the order of its line', async () => {
    // Two acquires started in the same tick: the second is queued behind the first, which registers with
    // its first poll. Were the second's registration to reach Redis first, Redis would keep the one free
    // slot for it (it does not poll) and tell the first to wait until the window turns, here a minute.
    const s = setup({ burst: 3, windowMs: 60_000 });
    const a = s.limiter();
    for (let i = 0; i < 2; i++) await (await a.acquire(undefined, 'low')).done();
    const order: string[] = [];
    const first = a.acquire(undefined, 'low').then(async (p) => {
      order.push('first');
      await p.done();
    });
    const stop = new AbortController();
    const second = a.acquire(stop.signal, 'low').then(async (p) => {
      order.push('second');
      await p.done();
    });
    second.catch(() => undefined);
    await waitFor(async () => order.length > 0, 10_000, 10);
    await first;
    expect(order).toEqual(['first']);
    // The second keeps its place in Redis, still waiting for the window.
    expect(await s.waiting()).toBe(1);
    stop.abort(new Error('done'));
    await expect(second).rejects.toThrow('done');
  });

  it('local lines are per level: a high waiter never queues behind a low one of its own process', async () => {
    const s = setup({ burst: 1, windowMs: 400 });
    const a = s.limiter();
    await s.fill(a);
    const order: string[] = [];
    const all = [
      await enqueue(s, a, 'l0', 'low', order),
      await enqueue(s, a, 'l1', 'low', order),
      await enqueue(s, a, 'h0', 'high', order),
    ];
    await Promise.all(all.map((x) => x.granted));
    expect(order).toEqual(['h0', 'l0', 'l1']);
  });
});

describe('pacing below high across processes (paceBelowHigh, as the worker runs it)', () => {
  it('a saturating low backlog on two processes is granted evenly, never more than burst per window, and a high call goes before the next low one', async () => {
    const { limiter } = setup({ burst: 6, windowMs: 1_200, paceBelowHigh: true });
    const [a, b] = [limiter(), limiter()];
    const grants: { at: number; p: LimiterPriority }[] = [];
    // Grant times on the Redis clock (the limiter's own), not when this process got round to noting them.
    const take = async (rl: RateLimiter, p: LimiterPriority) => {
      const permit = await rl.acquire(undefined, p);
      grants.push({ at: permit.acquiredAtMs, p });
      await permit.done();
    };
    const stop = Date.now() + 3_000;
    const backlog = async (rl: RateLimiter) => {
      while (Date.now() < stop) await take(rl, 'low');
    };
    const highs = (async () => {
      await new Promise((r) => setTimeout(r, 1_500)); // the backlog has saturated the window by now
      for (let i = 0; i < 3; i++) {
        const before = grants.filter((g) => g.p === 'low').length;
        await take(a, 'high');
        // At most the one low grant already decided when the high call asked.
        expect(grants.filter((g) => g.p === 'low').length - before).toBeLessThanOrEqual(1);
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    await Promise.all([backlog(a), backlog(a), backlog(b), backlog(b), highs]);
    expect(
      maxInWindow(
        grants.map((g) => g.at),
        1_200,
      ),
    ).toBeLessThanOrEqual(6);
    // Low grants are paced to window / burst = 200 ms on average (one of catch-up): at most 4 in
    // any 600 ms, where an unpaced window would hand all 6 out at once.
    const lows = grants.filter((g) => g.p === 'low').map((g) => g.at);
    expect(maxInWindow(lows, 600)).toBeLessThanOrEqual(4);
  });
});
