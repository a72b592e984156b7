import { afterEach, describe, expect, it } from 'vitest';
import { closeRedis, createRedisConnection, sendNow, type RedisClient } from '../../../src/redis/connection.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

// An auto-pipelined connection holds a turn's commands for one write at the turn's end; a command it leaves
// out of its pipelining (`unpipelined`, or sent with sendNow) goes out at once, so Redis runs it before the
// commands held back in the same turn: what these tests read.
describe('commands sent at once on an auto-pipelined connection', () => {
  let redis: RedisClient | undefined;
  afterEach(async () => {
    if (redis) await closeRedis(redis);
    redis = undefined;
  });

  it('a command named in `unpipelined` runs before the pipelined commands issued before it in the same turn', async () => {
    const r = (redis = createRedisConnection(testRedisUrl(), 'worker', 'test-unpipelined', { autoPipeline: true, unpipelined: ['get'] }));
    await r.ping();
    const key = `${uniquePrefix('unpipelined')}:k`;
    const [, read] = await Promise.all([r.set(key, 'written'), r.get(key)]);
    expect(read).toBeNull();
    expect(await r.get(key)).toBe('written');
  });

  it('without it, the same two commands keep their order (one pipeline)', async () => {
    const r = (redis = createRedisConnection(testRedisUrl(), 'worker', 'test-pipelined', { autoPipeline: true }));
    await r.ping();
    const key = `${uniquePrefix('pipelined')}:k`;
    const [, read] = await Promise.all([r.set(key, 'written'), r.get(key)]);
    expect(read).toBe('written');
  });

  it('sendNow sends its command at once and answers its reply as a string', async () => {
    const r = (redis = createRedisConnection(testRedisUrl(), 'worker', 'test-send-now', { autoPipeline: true }));
    await r.ping();
    const key = `${uniquePrefix('send-now')}:z`;
    await r.zadd(key, 1, 'a', 2, 'b', 3, 'c');
    const [, removed] = await Promise.all([r.zadd(key, 4, 'd'), sendNow(r, 'zrem', [key, 'a', 'b', 'd'])]);
    // The ZADD of `d` was held for the turn's pipeline: the ZREM ran first and found two of its three members.
    expect(removed).toBe(2);
    expect(await r.zrange(key, '0', '-1')).toEqual(['c', 'd']);
    expect(await sendNow(r, 'zscore', [key, 'c'])).toBe('3');
  });
});
