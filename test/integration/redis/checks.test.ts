import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisWarnings } from '../../../src/redis/checks.js';
import { closeRedis, connectForCommand, type RedisClient } from '../../../src/redis/connection.js';
import { startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';

// The warnings about an external Redis's settings, read from a redis-server of this
// test's own (its settings are changed with CONFIG SET, which the shared one must not see).
describe('redisWarnings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-redis-checks-'));
  let server: ManagedRedis;
  let redis: RedisClient;

  beforeAll(async () => {
    server = await startManagedRedis({ dir });
    redis = await connectForCommand(server.url);
  });
  afterAll(async () => {
    if (redis) await closeRedis(redis);
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('none for the managed redis-server: noeviction and AOF on', async () => {
    expect(await redisWarnings(redis)).toEqual([]);
  });

  it('an eviction policy other than noeviction is named, with the setting that fixes it', async () => {
    await redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
    expect(await redisWarnings(redis)).toEqual([
      'Redis maxmemory-policy is "allkeys-lru"; set it to "noeviction" so queued deliveries and dedupe keys are never evicted',
    ]);
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
  });

  it('no persistence at all (no AOF, no save points), then RDB snapshots only, each say what is lost and what to enable', async () => {
    await redis.config('SET', 'appendonly', 'no');
    await redis.config('SET', 'save', '');
    expect(await redisWarnings(redis)).toEqual([
      'Redis persistence is off (appendonly no, no save points); enable AOF (appendonly yes) so acknowledged deliveries survive a restart',
    ]);
    await redis.config('SET', 'save', '3600 1');
    expect(await redisWarnings(redis)).toEqual([
      'Redis AOF is off (only RDB snapshots); deliveries acknowledged since the last snapshot are lost on a crash. Enable appendonly yes',
    ]);
    await redis.config('SET', 'save', '');
    await redis.config('SET', 'appendonly', 'yes');
  });
});
