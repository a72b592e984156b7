/**
 * The one timer wiring (src/sources/timers.ts): every timed source's job schedulers brought in line
 * under one lock, the same way for each queue; unchanged timers are left alone, unwanted ones removed,
 * and a source that cannot tell (null) keeps what its queue has.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTimers, SYNC_LOCK_MS, type TimedSource, type Timer } from '../../../src/sources/timers.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { memoryLogger, waitFor } from '../../support/service.js';

const timer = (id: string, every: number): Timer => ({
  id,
  repeat: { every },
  job: {
    name: id,
    data: { id },
    opts: { attempts: 2, backoff: { type: 'fixed', delay: 10 }, removeOnComplete: { count: 10 }, removeOnFail: false },
  },
});
const source = (queue: string, timers: readonly Timer[] | null, run?: TimedSource['run']): TimedSource => ({
  queue,
  what: `${queue} run`,
  timer: { noun: queue, removed: 'gone' },
  timers,
  run,
});

describe('startTimers', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(testRedisUrl());
  });
  afterAll(() => redis.disconnect());

  const schedulers = async (prefix: string, name: string) => {
    const q = new Queue(name, { connection: redis, prefix });
    try {
      return (await q.getJobSchedulers(0, -1)).map((s) => [s.key, s.every]).sort();
    } finally {
      await q.close();
    }
  };

  it('registers each source’s schedulers, keeps unchanged ones, removes unwanted ones, leaves a null source alone', async () => {
    const prefix = uniquePrefix('timers');
    const { log, lines } = memoryLogger();
    const start = (sources: TimedSource[]) =>
      startTimers({ redisUrl: testRedisUrl(), commands: redis, prefix, log, workerOptions: {}, sources });

    await (await start([source('a', [timer('a1', 60_000), timer('a2', 120_000)]), source('b', [timer('b1', 60_000)])])).close();
    expect(await schedulers(prefix, 'a')).toEqual([
      ['a1', 60_000],
      ['a2', 120_000],
    ]);
    expect(await schedulers(prefix, 'b')).toEqual([['b1', 60_000]]);
    expect(lines.filter((l) => l.includes(' added'))).toHaveLength(3);

    // Same timers: nothing upserted. a2 changed, a1 dropped; b cannot tell: kept.
    lines.length = 0;
    await (await start([source('a', [timer('a2', 120_000)]), source('b', null)])).close();
    expect(lines.filter((l) => /added|updated/.test(l))).toHaveLength(0);
    expect(lines.some((l) => l.includes('a removed: gone'))).toBe(true);
    expect(await schedulers(prefix, 'a')).toEqual([['a2', 120_000]]);
    expect(await schedulers(prefix, 'b')).toEqual([['b1', 60_000]]);

    lines.length = 0;
    await (await start([source('a', [timer('a2', 30_000)]), source('b', [])])).close();
    expect(lines.some((l) => l.includes('a updated'))).toBe(true);
    expect(await schedulers(prefix, 'a')).toEqual([['a2', 30_000]]);
    expect(await schedulers(prefix, 'b')).toEqual([]);
  });

  it('a sync lock left by a process killed mid-sync lapses within seconds: the next worker then syncs', async () => {
    const prefix = uniquePrefix('timers-stale');
    // A worker SIGKILLed between taking the lock and releasing it: nobody will delete it.
    await redis.set(`${prefix}:sources:sync`, 'killed-holder', 'PX', SYNC_LOCK_MS);
    expect(SYNC_LOCK_MS).toBeLessThanOrEqual(5_000);
    const timers = await startTimers({
      redisUrl: testRedisUrl(),
      commands: redis,
      prefix,
      log: memoryLogger().log,
      workerOptions: {},
      sources: [source('a', [timer('a1', 60_000)])],
    });
    await timers.close();
    expect(await schedulers(prefix, 'a')).toEqual([['a1', 60_000]]);
    // Its own lock released, the stale one long gone.
    expect(await redis.exists(`${prefix}:sources:sync`)).toBe(0);
  });

  it('runs each tick’s job in the source’s worker', async () => {
    const prefix = uniquePrefix('timers-run');
    const ran: unknown[] = [];
    const timers = await startTimers({
      redisUrl: testRedisUrl(),
      commands: redis,
      prefix,
      log: memoryLogger().log,
      workerOptions: {},
      sources: [
        source('ticks', [timer('t', 1_000)], async (job) => {
          ran.push(job.data);
          return 'ok';
        }),
      ],
    });
    try {
      await waitFor(() => ran.length >= 1, 10_000);
      expect(ran[0]).toEqual({ id: 't' });
    } finally {
      await timers.close();
    }
  });
});
