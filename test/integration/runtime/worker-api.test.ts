import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRateLimiter, randomIdempotencyKey } from '../../../src/api/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { workerApiFactories } from '../../../src/runtime/worker-api.js';
import { createFairPools, fairProcessor } from '../../../src/worker/index.js';
import { contact, fakeFetch } from '../../support/fake-fetch.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { memoryLogger } from '../../support/service.js';

describe("a worker run waiting for its workspace's API budget", () => {
  let redis: Redis;
  const prefixes: string[] = [];
  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    for (const prefix of prefixes) {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
    }
    redis.disconnect();
  });

  /** One workspace: its config, API factories (the worker's, on the real Redis limiter) and calls seen. */
  function workspace(id: string) {
    const prefix = uniquePrefix(`fair-${id}`);
    prefixes.push(prefix);
    const env = {
      QUEUE_PREFIX: prefix,
      WORKSPACE_API_URL: 'https://api.test/api/v1',
      WORKSPACE_API_TOKEN: `token-${id}-${prefix}`,
      WORKSPACE_API_BURST: '5',
    };
    const config = loadConfig(env);
    const f = fakeFetch(() => ({ body: { data: contact(7) } }));
    const factories = workerApiFactories({ config, log: memoryLogger().log, fetch: f.fetch }, redis);
    if (!factories) throw new Error('the API is configured');
    const limiter = createRedisRateLimiter({ redis, token: env.WORKSPACE_API_TOKEN, burst: 5, prefix: `${prefix}:api-rate:` });
    return { factories, calls: f.calls, limiter };
  }

  it('gives its slot up: with one slot, another workspace runs meanwhile, and the run completes after', async () => {
    const pools = createFairPools(1);
    const a = workspace('a');
    const b = workspace('b');
    const done: string[] = [];
    const run = (id: string, w: typeof a) =>
      fairProcessor(pools, 'normal', { id, weight: 1 }, async () => {
        await w.factories.live(randomIdempotencyKey, 'normal').contacts.get(7);
        done.push(id);
      });
    // A's budget is spent for the next 1.5 s (what a 429 tells every process of the token).
    await a.limiter.pause(1_500);
    const runA = run('a', a)();
    const runB = run('b', b)();
    await Promise.all([runA, runB]);
    expect(done).toEqual(['b', 'a']);
    expect(a.calls).toHaveLength(1);
    expect(b.calls).toHaveLength(1);
    expect(pools.pool('normal').free).toBe(1);
    expect(pools.pool('normal').waiting).toBe(0);
  });
});
