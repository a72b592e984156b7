/** The pending fan-out set: marked by the ingest script, cleared by the events worker (the clears of one turn in one command), read oldest first, trimmed by the pumps. */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { oldestPendingFanOut, PendingFanOutClears, PENDING_KEEP_MS, trimPendingFanOut } from '../../../src/queue/flow-pending.js';
import { IngestStore } from '../../../src/queue/ingest.js';
import { ingestKeys } from '../../../src/queue/names.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
afterAll(() => redis.disconnect());

const deliveries = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `evt_${i}`, receivedAt: new Date(1_800_000_000_000 + i).toISOString() }));

/** Marks deliveries pending as the ingest script does (receipt ms → key). */
async function markPendingFanOut(prefix: string, ds: readonly { key: string; receivedAt: string }[]): Promise<void> {
  await redis.zadd(ingestKeys(prefix).pendingFanOut, ...ds.flatMap((d) => [Date.parse(d.receivedAt), d.key]));
}

/** The commands `redis` sends while `fn` runs (ioredis' own hook: every command passes sendCommand). */
async function sent(fn: () => Promise<void>): Promise<string[]> {
  const names: string[] = [];
  const original = redis.sendCommand.bind(redis);
  redis.sendCommand = (cmd: { name: string }) => {
    names.push(cmd.name);
    return original(cmd as never);
  };
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
    await markPendingFanOut(prefix, deliveries(5));
    const clears = new PendingFanOutClears(redis, prefix);
    const names = await sent(async () => {
      await Promise.all(
        ['evt_0', 'evt_2', 'evt_4'].map(async (k) => {
          await clears.clear(k);
          // Settled: its delivery is off the set already.
          expect(await redis.zscore(key, k)).toBeNull();
        }),
      );
    });
    expect(names.filter((n) => n === 'zrem')).toHaveLength(1);
    expect(await redis.zrange(key, '0', '-1')).toEqual(['evt_1', 'evt_3']);
  });

  it('clears of later turns are later commands; a failed command rejects every clear it carried', async () => {
    const prefix = uniquePrefix('pending');
    const key = ingestKeys(prefix).pendingFanOut;
    await markPendingFanOut(prefix, deliveries(3));
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

describe('the pending fan-out set from ingest on', () => {
  it('the ingest script marks each accepted delivery at its receipt (a duplicate not again); the oldest is read first; old entries are trimmed', async () => {
    const prefix = uniquePrefix('pending');
    const store = new IngestStore(redis, prefix, 60_000);
    const at = (ms: number) => new Date(ms).toISOString();
    const put = (key: string, ms: number) =>
      store.put({ key, name: 'message.received', receivedAt: at(ms), secretIndex: 0, body: '{}', headers: {} });
    expect(await oldestPendingFanOut(redis, prefix)).toBeNull();
    expect(await Promise.all([put('late', 2_000_000_000_000), put('early', 1_900_000_000_000), put('late', 1_800_000_000_000)])).toEqual([
      'accepted',
      'accepted',
      'duplicate',
    ]);
    expect(await oldestPendingFanOut(redis, prefix)).toEqual({ key: 'early', at: 1_900_000_000_000 });
    expect(await redis.zscore(ingestKeys(prefix).pendingFanOut, 'late')).toBe('2000000000000');
    // Still in the inbox: pending from the moment it was stored.
    expect(await redis.llen(ingestKeys(prefix).inbox)).toBe(2);
    expect(await trimPendingFanOut(redis, prefix, 1_900_000_000_000 + PENDING_KEEP_MS + 1)).toBe(1);
    expect(await oldestPendingFanOut(redis, prefix)).toEqual({ key: 'late', at: 2_000_000_000_000 });
  });
});
