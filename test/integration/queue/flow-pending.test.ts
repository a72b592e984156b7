/** The pending fan-out set: marked by the pump, cleared by the events worker; the worker's clears of one turn go in one command. */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { markPendingFanOut, PendingFanOutClears } from '../../../src/queue/flow-pending.js';
import { ingestKeys } from '../../../src/queue/names.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
afterAll(() => redis.disconnect());

const deliveries = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `evt_${i}`, receivedAt: new Date(1_800_000_000_000 + i).toISOString() }));

/** The commands `redis` sends while `fn` runs (ioredis' own hook: every command passes sendCommand). */
async function sent(fn: () => Promise<void>): Promise<string[]> {
  const names: string[] = [];
  const original = redis.sendCommand.bind(redis);
  redis.sendCommand = ((cmd: { name: string }) => { names.push(cmd.name); return original(cmd as never); });
  try {
    await fn();
  } finally {
    redis.sendCommand = original;
  }
  return names;
}

describe('pending fan-out clears', () => {
  it('the clears asked for in one turn take the deliveries off the set in one ZREM, and each promise settles only after it', async () => {
    const prefix = uniquePrefix('pending');
    const key = ingestKeys(prefix).pendingFanOut;
    await markPendingFanOut(redis, prefix, deliveries(5));
    const clears = new PendingFanOutClears(redis, prefix);
    const names = await sent(async () => {
      await Promise.all(['evt_0', 'evt_2', 'evt_4'].map(async (k) => {
        await clears.clear(k);
        // Settled: its delivery is off the set already.
        expect(await redis.zscore(key, k)).toBeNull();
      }));
    });
    expect(names.filter((n) => n === 'zrem')).toHaveLength(1);
    expect(await redis.zrange(key, '0', '-1')).toEqual(['evt_1', 'evt_3']);
  });

  it('clears of later turns are later commands; a failed command rejects every clear it carried', async () => {
    const prefix = uniquePrefix('pending');
    const key = ingestKeys(prefix).pendingFanOut;
    await markPendingFanOut(redis, prefix, deliveries(3));
    const clears = new PendingFanOutClears(redis, prefix);
    await clears.clear('evt_0');
    await clears.clear('evt_1');
    expect(await redis.zrange(key, '0', '-1')).toEqual(['evt_2']);
    // The set's key holding another type: the ZREM fails, and both clears say so.
    const broken = uniquePrefix('pending');
    await redis.set(ingestKeys(broken).pendingFanOut, 'not a set');
    const failing = new PendingFanOutClears(redis, broken);
    const results = await Promise.allSettled([failing.clear('a'), failing.clear('b')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/WRONGTYPE/);
  });
});
