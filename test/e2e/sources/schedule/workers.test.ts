import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliProcess } from '../../../support/cli.js';
import { testRedisUrl, uniquePrefix } from '../../../support/redis.js';
import { waitFor } from '../../../support/wait.js';

const HANDLERS = fileURLToPath(new URL('../../../support/handlers/schedule', import.meta.url));

interface TickRun {
  tick: string;
  key: string;
  attempt: number;
  pid: number;
}

describe('a schedule with three `switchyard work` processes', () => {
  const prefix = uniquePrefix('sched');
  const list = `${prefix}:test:ticks`;
  const workers: CliProcess[] = [];
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    // Every child is stopped, whatever the test's outcome.
    await Promise.allSettled(workers.map((w) => w.stop('SIGKILL')));
    await redis.del(list);
    redis.disconnect();
  });

  it('runs each tick exactly once across the workers', async () => {
    for (let i = 0; i < 3; i++) {
      workers.push(
        runCli(['work'], {
          REDIS_URL: testRedisUrl(),
          QUEUE_PREFIX: prefix,
          HANDLERS_DIR: HANDLERS,
          LOG_LEVEL: 'info',
          TICK_REDIS_URL: testRedisUrl(),
          TICK_LIST: list,
        }),
      );
    }
    await Promise.all(workers.map((w) => w.waitFor(/worker started/, 30_000)));
    for (const w of workers) expect(w.output()).toMatch(/schedules started/);
    await waitFor(async () => (await redis.llen(list)) >= 6, 60_000, 100);
    const stopped = await Promise.all(workers.map((w) => w.stop('SIGTERM')));
    expect(stopped).toEqual([0, 0, 0]);

    const runs = (await redis.lrange(list, 0, -1)).map((r) => JSON.parse(r) as TickRun);
    const ticks = runs.map((r) => r.tick);
    // No tick ran twice, whichever worker took it.
    expect(new Set(ticks).size).toBe(ticks.length);
    for (const r of runs) {
      expect(r.key).toBe(`schedule:tick:${r.tick}`);
      expect(Number.isFinite(Date.parse(r.tick))).toBe(true);
    }
  }, 120_000);
});
