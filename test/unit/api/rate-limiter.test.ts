import { describe, expect, it } from 'vitest';
import { QuotaExhaustedError, createMemoryRateLimiter } from '../../../src/api/index.js';
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
    const next = rl.acquire().then(() => { granted = true; });
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
    for (let i = 0; i < 2; i++) { await (await rl.acquire()).done(); granted.push(t.clock()); }
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
