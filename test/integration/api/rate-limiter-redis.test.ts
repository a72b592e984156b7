import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { QuotaExhaustedError, createRedisRateLimiter, tokenKey } from '../../../src/api/index.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { maxInWindow } from '../../../bench/lib/windows.js';

const conns: Redis[] = [];
const connect = (): Redis => {
  const r = new Redis(testRedisUrl(), { lazyConnect: false, maxRetriesPerRequest: 1 });
  conns.push(r);
  return r;
};
afterAll(async () => {
  await Promise.all(conns.map((c) => c.quit()));
});

describe('Redis rate limiter (shared across connections)', () => {
  it('two limiters on separate connections never grant more than burst per window together', async () => {
    const prefix = `${uniquePrefix('rl')}:`;
    const token = 'sbx_shared_token';
    const windowMs = 1000;
    const a = createRedisRateLimiter({ redis: connect(), token, burst: 5, prefix, windowMs });
    const b = createRedisRateLimiter({ redis: connect(), token, burst: 5, prefix, windowMs });
    const grants: number[] = [];
    const worker = async (rl: typeof a): Promise<void> => {
      const end = Date.now() + 2500;
      while (Date.now() < end) {
        const p = await rl.acquire();
        grants.push(Date.now());
        await new Promise((r) => setTimeout(r, 3)); // the "request"
        await p.done();
      }
    };
    await Promise.all([worker(a), worker(a), worker(b), worker(b)]);
    expect(maxInWindow(grants, windowMs)).toBeLessThanOrEqual(5);
    expect(grants.length).toBeGreaterThanOrEqual(13); // ~5 per window over 2.5 s, shared
  });

  it('keys hold the SHA-256 of the token, never the token', async () => {
    const prefix = `${uniquePrefix('rl')}:`;
    const redis = connect();
    const token = 'sbx_very_secret';
    const rl = createRedisRateLimiter({ redis, token, burst: 5, prefix });
    await (await rl.acquire()).done();
    await rl.pause(1000);
    const keys = await redis.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      expect(k).not.toContain(token);
      expect(k).toContain(tokenKey(token));
    }
  });

  it('a pause set by one process holds the others until Retry-After', async () => {
    const prefix = `${uniquePrefix('rl')}:`;
    const a = createRedisRateLimiter({ redis: connect(), token: 't', burst: 50, prefix });
    const b = createRedisRateLimiter({ redis: connect(), token: 't', burst: 50, prefix });
    const started = Date.now();
    await a.pause(400);
    const p = await b.acquire();
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(p.waitedMs).toBeGreaterThan(0);
  });

  it('an exhausted quota is stored with its reset time and refused everywhere', async () => {
    const prefix = `${uniquePrefix('rl')}:`;
    const redis = connect();
    const a = createRedisRateLimiter({ redis, token: 't', burst: 50, prefix });
    const b = createRedisRateLimiter({ redis: connect(), token: 't', burst: 50, prefix });
    const resetAt = new Date(Date.now() + 60_000);
    await a.exhaustQuota(resetAt);
    const err = await b.acquire().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuotaExhaustedError);
    expect((err as QuotaExhaustedError).resetAt.getTime()).toBe(resetAt.getTime());
    const ttl = await redis.pttl(`${prefix}{${tokenKey('t')}}:quota`);
    expect(ttl).toBeGreaterThan(50_000);
  });

  it('observe: fewer remaining at the service than counted here → the gap is used up', async () => {
    const prefix = `${uniquePrefix('rl')}:`;
    const rl = createRedisRateLimiter({ redis: connect(), token: 't', burst: 4, prefix, windowMs: 800 });
    const p = await rl.acquire();
    await p.done();
    await rl.observe({ limit: 4, remaining: 0, acquiredAtMs: p.acquiredAtMs }); // service saw 4
    const started = Date.now();
    await (await rl.acquire()).done();
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
  });
});
