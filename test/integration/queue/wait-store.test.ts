import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WaitStore } from '../../../src/queue/waits/store.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const HOUR = 3_600_000;
const T = Date.parse('2026-11-26T10:00:00Z');
const reply = (n: number, at: number, name = 'message.sent') => ({ deliveryKey: `evt_${n}`, name, receivedAt: at, body: `{"id":"evt_${n}"}`, keys: ['conversation:42', 'contact:7'] });

describe('durable waits in Redis (real Redis)', () => {
  let redis: Redis;
  let other: Redis;
  beforeAll(() => { redis = new Redis(testRedisUrl()); other = new Redis(testRedisUrl()); });
  afterAll(() => { redis.disconnect(); other.disconnect(); });

  it('an event after the wait answers it once, and queues the run to be woken', async () => {
    const store = new WaitStore(redis, uniquePrefix('wait'), HOUR);
    const w = await store.register({ id: 'run1:reply', key: 'conversation:42', event: 'message.sent', since: T, dueAt: T + 15 * 60_000, run: 'job1' });
    expect(w.status).toBe('pending');
    expect(await store.event(reply(1, T + 1000, 'message.received'), T + 1000)).toBe(0);
    expect(await store.event(reply(2, T + 2000), T + 2000)).toBe(1);
    expect(await store.event(reply(2, T + 2000), T + 2000)).toBe(0); // a repeat of the delivery
    expect(await store.event(reply(3, T + 3000), T + 3000)).toBe(0); // answered already
    const got = await store.get('run1:reply');
    expect(got).toMatchObject({ status: 'matched', run: 'job1', match: { deliveryKey: 'evt_2', receivedAt: T + 2000 } });
    expect((await store.woken()).map((x) => x.id)).toEqual(['run1:reply']);
    // Its time coming later changes nothing.
    expect(await store.expire(T + HOUR)).toEqual([]);
    await store.ack('run1:reply');
    expect(await store.woken()).toEqual([]);
  });

  it('looks back: an event received after the run\'s own event and before the wait began answers it at registration', async () => {
    const store = new WaitStore(redis, uniquePrefix('wait'), HOUR);
    await store.event(reply(1, T - 5000), T - 5000); // before the run's own event: not in the lookback
    await store.event(reply(2, T + 5000), T + 5000);
    const w = await store.register({ id: 'run1:reply', key: 'conversation:42', event: 'message.sent', since: T, dueAt: T + HOUR, run: 'job1' });
    expect(w).toMatchObject({ status: 'matched', match: { deliveryKey: 'evt_2' } });
    // Registering again (the resumed run) gives the same answer, and nothing was queued to wake: the run never slept.
    expect(await store.register({ id: 'run1:reply', key: 'conversation:42', event: 'message.sent', since: T, dueAt: T + HOUR, run: 'job1' })).toEqual(w);
    expect(await store.woken()).toEqual([]);
    // With no lookback (since = now) the earlier event does not count.
    const late = await store.register({ id: 'run2:reply', key: 'conversation:42', event: 'message.sent', since: T + 6000, dueAt: T + HOUR, run: 'job2' });
    expect(late.status).toBe('pending');
  });

  it('times out once, and a sleep wakes as slept', async () => {
    const store = new WaitStore(redis, uniquePrefix('wait'), HOUR);
    await store.register({ id: 'w', key: 'conversation:42', event: 'message.sent', since: T, dueAt: T + 1000, run: 'job1' });
    await store.register({ id: 's', key: '', since: T, dueAt: T + 500, run: 'job2' });
    expect(await store.expire(T + 400)).toEqual([]);
    expect((await store.expire(T + 1000)).sort()).toEqual(['s', 'w']);
    expect(await store.expire(T + 2000)).toEqual([]);
    expect((await store.get('w'))?.status).toBe('timeout');
    expect((await store.get('s'))?.status).toBe('slept');
    // An event after the timeout answers nothing.
    expect(await store.event(reply(9, T + 1500), T + 1500)).toBe(0);
    expect((await store.get('w'))?.status).toBe('timeout');
  });

  it('forgets a key\'s events after the retention', async () => {
    const prefix = uniquePrefix('wait');
    const store = new WaitStore(redis, prefix, 10_000);
    await store.event(reply(1, T), T);
    await store.event(reply(2, T + 20_000), T + 20_000);
    expect(await redis.zrange(`${prefix}:wait:log:conversation:42`, '0', '-1')).toEqual(['evt_2']);
    expect(await redis.hkeys(`${prefix}:wait:body:conversation:42`)).toEqual(['evt_2']);
  });

  it('the race: an event fanned out while its wait registers is matched exactly once, never missed (2 000 rounds, two connections)', async () => {
    const prefix = uniquePrefix('wait');
    const a = new WaitStore(redis, prefix, HOUR);
    const b = new WaitStore(other, prefix, HOUR);
    const rounds = 2000;
    const results = await Promise.all(Array.from({ length: rounds }, async (_, i) => {
      const key = `conversation:${i}`;
      const ev = { deliveryKey: `evt_${i}`, name: 'message.sent', receivedAt: T + 1, body: '{}', keys: [key] };
      const reg = { id: `run${i}:reply`, key, event: 'message.sent', since: T, dueAt: T + HOUR, run: `job${i}` };
      // Alternate which side goes first on the wire; both are in flight together.
      const [w, answered] = i % 2 === 0
        ? await Promise.all([a.register(reg), b.event(ev, T + 1)])
        : await Promise.all([b.event(ev, T + 1), a.register(reg)]).then(([n, st]) => [st, n] as const);
      return { matchedAtRegistration: w.status === 'matched', answered };
    }));
    for (const r of results) {
      // Exactly one of the two saw the other: matched at registration, or answered by the event.
      expect(Number(r.matchedAtRegistration) + r.answered).toBe(1);
    }
    const states = await Promise.all(Array.from({ length: rounds }, (_, i) => a.get(`run${i}:reply`)));
    expect(states.every((s) => s?.status === 'matched')).toBe(true);
    // Woken once each: only the ones the event answered (the others never slept).
    const woken = await redis.zcard(`${prefix}:wait:wake`);
    expect(woken).toBe(results.filter((r) => r.answered === 1).length);
    // Both orders happened.
    expect(results.some((r) => r.matchedAtRegistration)).toBe(true);
    expect(results.some((r) => r.answered === 1)).toBe(true);
  });
});
