import { describe, expect, it } from 'vitest';
import {
  LIMITER_PRIORITIES,
  QuotaExhaustedError,
  SHARE_PASSED_OVER,
  createMemoryRateLimiter,
  type LimiterPriority,
  type RateLimiter,
} from '../../../src/api/index.js';
import { fakeTime } from '../../support/fake-fetch.js';

describe('in-process rate limiter (sliding window)', () => {
  it('grants `burst` slots per 10 s, then waits for the oldest to leave the window', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 3, now: t.clock, sleep: t.sleep });
    const grantedAt: number[] = [];
    for (let i = 0; i < 7; i++) {
      const p = await rl.acquire();
      grantedAt.push(t.clock());
      await p.done();
      t.advance(100);
    }
    expect(grantedAt).toEqual([0, 100, 200, 10_000, 10_100, 10_200, 20_000]);
  });

  it('an in-flight slot keeps counting until done()', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 1, now: t.clock, sleep: t.sleep, inflightMs: 60_000 });
    const p = await rl.acquire();
    t.advance(20_000);
    let granted = false;
    const next = rl.acquire().then(() => {
      granted = true;
    });
    await new Promise((r) => setTimeout(r, 5));
    await p.done(); // finished at 20 000+: the next slot is free 10 s later
    await next;
    expect(granted).toBe(true);
    expect(t.clock()).toBeGreaterThanOrEqual(30_000);
  });

  it('a pause (429) holds every caller until it ends', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 10, now: t.clock, sleep: t.sleep });
    await rl.pause(4000);
    const p = await rl.acquire();
    expect(p.waitedMs).toBeGreaterThanOrEqual(4000);
    expect(t.clock()).toBe(4000);
  });

  it('fewer remaining at the service than we think → the difference counts as used', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 5, now: t.clock, sleep: t.sleep });
    const p = await rl.acquire();
    await p.done();
    await rl.observe({ limit: 5, remaining: 1, acquiredAtMs: p.acquiredAtMs }); // service saw 4, we sent 1
    const granted: number[] = [];
    for (let i = 0; i < 2; i++) {
      await (await rl.acquire()).done();
      granted.push(t.clock());
    }
    expect(granted).toEqual([0, 10_000]);
  });

  it('adopts a lower X-RateLimit-Limit', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 100, now: t.clock, sleep: t.sleep });
    const p = await rl.acquire();
    await p.done();
    await rl.observe({ limit: 2, remaining: 1, acquiredAtMs: 0 });
    await (await rl.acquire()).done();
    await (await rl.acquire()).done();
    expect(t.clock()).toBe(10_000);
  });

  it('an exhausted quota is a distinct state until its reset time', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 5, now: t.clock, sleep: t.sleep });
    await rl.exhaustQuota(new Date(50_000));
    const err = await rl.acquire().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuotaExhaustedError);
    expect((err as QuotaExhaustedError).resetAt.getTime()).toBe(50_000);
    t.advance(50_000);
    await expect(rl.acquire()).resolves.toBeDefined();
  });
});

/** Starts every acquire at once (in this order), finishes each request as soon as it is granted; returns the grant order. */
async function grantOrder(rl: RateLimiter, waiters: readonly [string, LimiterPriority][]): Promise<string[]> {
  const order: string[] = [];
  await Promise.all(
    waiters.map(async ([name, priority]) => {
      const p = await rl.acquire(undefined, priority);
      order.push(name);
      await p.done();
    }),
  );
  return order;
}

describe('in-process rate limiter: priority order', () => {
  it('exports the priorities highest first', () => {
    expect(LIMITER_PRIORITIES).toEqual(['high', 'normal', 'low']);
  });

  it('a full window grants the next slots by priority, FIFO within a level, whatever the arrival order', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 1, now: t.clock, sleep: t.sleep });
    await (await rl.acquire()).done(); // the window is full until 10 s
    const order = await grantOrder(rl, [
      ['low1', 'low'],
      ['low2', 'low'],
      ['normal1', 'normal'],
      ['low3', 'low'],
      ['high1', 'high'],
      ['normal2', 'normal'],
      ['high2', 'high'],
    ]);
    expect(order).toEqual(['high1', 'high2', 'normal1', 'normal2', 'low1', 'low2', 'low3']);
  });

  it('acquire without a priority is normal', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 1, now: t.clock, sleep: t.sleep });
    await (await rl.acquire()).done();
    const order: string[] = [];
    const take = (name: string, p?: LimiterPriority) =>
      rl.acquire(undefined, p).then(async (x) => {
        order.push(name);
        await x.done();
      });
    await Promise.all([take('low', 'low'), take('default'), take('high', 'high')]);
    expect(order).toEqual(['high', 'default', 'low']);
  });

  it(`minimum share: a waiting level passed over ${SHARE_PASSED_OVER} grants in a row takes the next one`, async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 1, now: t.clock, sleep: t.sleep });
    await (await rl.acquire()).done();
    const highs = Array.from({ length: 20 }, (_, i): [string, LimiterPriority] => [`H${i}`, 'high']);
    const order = await grantOrder(rl, [...highs, ['L0', 'low'], ['L1', 'low']]);
    const levels = order.map((n) => n[0]).join('');
    expect(levels).toBe(`${'H'.repeat(8)}L${'H'.repeat(8)}L${'H'.repeat(4)}`);
    expect(order.filter((n) => n.startsWith('L'))).toEqual(['L0', 'L1']);
  });

  it('minimum share: two lower levels due at once go higher first; neither is passed over more than 9 grants in a row', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 1, now: t.clock, sleep: t.sleep });
    await (await rl.acquire()).done();
    const w: [string, LimiterPriority][] = [
      ...Array.from({ length: 30 }, (_, i): [string, LimiterPriority] => [`H${i}`, 'high']),
      ...Array.from({ length: 3 }, (_, i): [string, LimiterPriority] => [`N${i}`, 'normal']),
      ...Array.from({ length: 3 }, (_, i): [string, LimiterPriority] => [`L${i}`, 'low']),
    ];
    const levels = (await grantOrder(rl, w)).map((n) => n[0]).join('');
    expect(levels.slice(0, 19)).toBe(`${'H'.repeat(8)}NL${'H'.repeat(7)}NL`); // N's grant passed L over, and L's passed N over
    for (const level of ['N', 'L']) {
      const at = [...levels].flatMap((c, i) => (c === level ? [i] : []));
      for (let i = 1; i < at.length; i++) expect((at[i] as number) - (at[i - 1] as number) - 1).toBeLessThanOrEqual(9);
      expect(at[0]).toBeLessThanOrEqual(9);
    }
  });

  it('an aborted waiter leaves the line at once: it holds no place', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 1, now: t.clock, sleep: t.sleep });
    await (await rl.acquire()).done();
    const ctrl = new AbortController();
    const high = rl.acquire(ctrl.signal, 'high');
    const low = rl.acquire(undefined, 'low');
    ctrl.abort(new Error('gave up'));
    await expect(high).rejects.toThrow('gave up');
    const p = await low;
    expect(p.acquiredAtMs).toBeGreaterThanOrEqual(10_000);
    // and the line is empty again: the next acquire waits for the window only
    await p.done();
    const next = await rl.acquire(undefined, 'low');
    expect(next.acquiredAtMs).toBeGreaterThanOrEqual(p.acquiredAtMs + 10_000);
  });
});

describe('pacing below high (the worker limiter: paceBelowHigh)', () => {
  it('once the window is a tenth full, normal and low are granted one slot per window/burst on average; a backlog alone still gets the whole budget', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 4, windowMs: 1_000, now: t.clock, sleep: t.sleep, paceBelowHigh: true });
    const at: number[] = [];
    for (let i = 0; i < 6; i++) {
      await (await rl.acquire(undefined, 'low')).done();
      at.push(t.clock());
    }
    // One slot of catch-up, then one every 250 ms; 4 per second as before.
    expect(at).toEqual([0, 0, 250, 500, 1_000, 1_000]);
    for (let i = 0; i < 8; i++) {
      await (await rl.acquire(undefined, 'low')).done();
      at.push(t.clock());
    }
    // In the long run: the whole budget, evenly (4 per 1 000 ms window).
    expect(at.filter((x) => x >= 1_000 && x < 2_000)).toHaveLength(4);
    expect(at.filter((x) => x >= 2_000 && x < 3_000)).toHaveLength(4);
  });

  it('high is never paced: it takes a free slot the paced levels leave', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 4, windowMs: 1_000, now: t.clock, sleep: t.sleep, paceBelowHigh: true });
    for (let i = 0; i < 3; i++) await (await rl.acquire(undefined, 'low')).done();
    const lowAt = t.clock();
    await (await rl.acquire(undefined, 'high')).done();
    expect(lowAt).toBe(250);
    expect(t.clock()).toBe(250);
  });

  it('with a burst of 10 or more, one slot of the window is kept for high', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 10, windowMs: 1_000, now: t.clock, sleep: t.sleep, paceBelowHigh: true });
    const at: number[] = [];
    for (let i = 0; i < 30; i++) {
      await (await rl.acquire(undefined, 'low')).done();
      at.push(t.clock());
    }
    for (const x of at) expect(at.filter((y) => y > x - 1_000 && y <= x).length).toBeLessThanOrEqual(9);
    const before = t.clock();
    await (await rl.acquire(undefined, 'high')).done();
    expect(t.clock()).toBe(before);
  });

  it('off by default: a plain sliding window', async () => {
    const t = fakeTime(0);
    const rl = createMemoryRateLimiter({ burst: 4, windowMs: 1_000, now: t.clock, sleep: t.sleep });
    for (let i = 0; i < 4; i++) await (await rl.acquire(undefined, 'low')).done();
    expect(t.clock()).toBe(0);
  });
});
