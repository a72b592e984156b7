import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WaitStore } from '../../../../src/queue/waits/wait-store.js';
import { testRedisUrl, uniquePrefix } from '../../../support/redis.js';

const HOUR = 3_600_000;
const T = Date.parse('2026-11-26T10:00:00Z');
const reply = (n: number, at: number, name = 'message.sent') => ({
  deliveryKey: `evt_${n}`,
  name,
  receivedAt: at,
  body: `{"id":"evt_${n}"}`,
  keys: ['conversation:42', 'contact:7'],
});

describe('durable waits in Redis (real Redis)', () => {
  let redis: Redis;
  let other: Redis;
  beforeAll(() => {
    redis = new Redis(testRedisUrl());
    other = new Redis(testRedisUrl());
  });
  afterAll(() => {
    redis.disconnect();
    other.disconnect();
  });

  it('an event after the wait answers it once, and queues the run to be woken', async () => {
    const store = new WaitStore(redis, uniquePrefix('wait'), HOUR);
    const w = await store.register({
      id: 'run1:reply',
      key: 'conversation:42',
      event: 'message.sent',
      since: T,
      dueAt: T + 15 * 60_000,
      run: 'job1',
    });
    expect(w.status).toBe('pending');
    expect(await store.event(reply(1, T + 1000, 'message.received'), T + 1000)).toBe(0);
    expect(await store.event(reply(2, T + 2000), T + 2000)).toBe(1);
    expect(await store.event(reply(2, T + 2000), T + 2000)).toBe(0); // a repeat of the delivery
    expect(await store.event(reply(3, T + 3000), T + 3000)).toBe(0); // answered already
    const got = await store.get('run1:reply');
    expect(got).toMatchObject({ status: 'matched', run: 'job1', match: { deliveryKey: 'evt_2', receivedAt: T + 2000 } });
    expect((await store.woken()).map((x) => x.id)).toEqual(['run1:reply']);
    // Its time coming later changes nothing.
    expect((await store.settle('run1:reply', T + HOUR))?.status).toBe('matched');
    await store.ack('run1:reply');
    expect(await store.woken()).toEqual([]);
  });

  it("looks back: an event received after the run's own event and before the wait began answers it at registration", async () => {
    const store = new WaitStore(redis, uniquePrefix('wait'), HOUR);
    await store.event(reply(1, T - 5000), T - 5000); // before the run's own event: not in the lookback
    await store.event(reply(2, T + 5000), T + 5000);
    const w = await store.register({
      id: 'run1:reply',
      key: 'conversation:42',
      event: 'message.sent',
      since: T,
      dueAt: T + HOUR,
      run: 'job1',
    });
    expect(w).toMatchObject({ status: 'matched', match: { deliveryKey: 'evt_2' } });
    // Registering again (the resumed run) gives the same answer, and nothing was queued to wake: the run never slept.
    expect(
      await store.register({ id: 'run1:reply', key: 'conversation:42', event: 'message.sent', since: T, dueAt: T + HOUR, run: 'job1' }),
    ).toEqual(w);
    expect(await store.woken()).toEqual([]);
    // With no lookback (since = now) the earlier event does not count.
    const late = await store.register({
      id: 'run2:reply',
      key: 'conversation:42',
      event: 'message.sent',
      since: T + 6000,
      dueAt: T + HOUR,
      run: 'job2',
    });
    expect(late.status).toBe('pending');
  });

  it('times out once, and a sleep wakes as slept', async () => {
    const store = new WaitStore(redis, uniquePrefix('wait'), HOUR);
    await store.register({ id: 'w', key: 'conversation:42', event: 'message.sent', since: T, dueAt: T + 1000, run: 'job1' });
    await store.register({ id: 's', key: '', since: T, dueAt: T + 500, run: 'job2' });
    expect((await store.settle('w', T + 400))?.status).toBe('pending');
    expect((await store.settle('s', T + 400))?.status).toBe('pending');
    expect((await store.settle('w', T + 1000))?.status).toBe('timeout');
    expect((await store.settle('s', T + 1000))?.status).toBe('slept');
    expect((await store.settle('w', T + 2000))?.status).toBe('timeout');
    expect((await store.get('w'))?.status).toBe('timeout');
    expect((await store.get('s'))?.status).toBe('slept');
    // An event after the timeout answers nothing.
    expect(await store.event(reply(9, T + 1500), T + 1500)).toBe(0);
    expect((await store.get('w'))?.status).toBe('timeout');
  });

  it("forgets a key's events after the retention", async () => {
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
    const results = await Promise.all(
      Array.from({ length: rounds }, async (_, i) => {
        const key = `conversation:${i}`;
        const ev = { deliveryKey: `evt_${i}`, name: 'message.sent', receivedAt: T + 1, body: '{}', keys: [key] };
        const reg = { id: `run${i}:reply`, key, event: 'message.sent', since: T, dueAt: T + HOUR, run: `job${i}` };
        // Alternate which side goes first on the wire; both are in flight together.
        const [w, answered] =
          i % 2 === 0
            ? await Promise.all([a.register(reg), b.event(ev, T + 1)])
            : await Promise.all([b.event(ev, T + 1), a.register(reg)]).then(([n, st]) => [st, n] as const);
        return { matchedAtRegistration: w.status === 'matched', answered };
      }),
    );
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

  it('only watched names are logged when asked (one script call; nothing kept for others); a registration watches its name', async () => {
    const prefix = uniquePrefix('wait');
    const store = new WaitStore(redis, prefix, HOUR);
    expect(await store.deliver(reply(1, T), T, true)).toEqual([]);
    expect(await redis.exists(`${prefix}:wait:log:conversation:42`)).toBe(0);
    await store.register({ id: 'r', key: 'conversation:42', event: 'message.sent', since: T, dueAt: T + HOUR, run: 'handlers|job1' });
    expect(await store.deliver(reply(2, T + 1), T + 1, true)).toEqual([{ id: 'r', run: 'handlers|job1' }]);
    await store.watch(['message.received']);
    await store.deliver(reply(3, T + 2, 'message.received'), T + 2, true);
    expect(await redis.zrange(`${prefix}:wait:log:conversation:42`, '0', '-1')).toEqual(['evt_2', 'evt_3']);
  });

  it('settle ends a pending wait whose time came (no late match after it), and leaves one that is not due', async () => {
    const store = new WaitStore(redis, uniquePrefix('wait'), HOUR);
    await store.register({ id: 'w', key: 'conversation:42', event: 'message.sent', since: T, dueAt: T + 1000, run: 'job1' });
    expect((await store.settle('w', T + 999))?.status).toBe('pending');
    expect((await store.settle('w', T + 1000))?.status).toBe('timeout');
    expect(await store.event(reply(4, T + 1500), T + 1500)).toBe(0);
    expect(await store.settle('nope', T)).toBeNull();
  });

  it('a cancelOn entry is cancelled by its event (and by one in its lookback); forget removes every trace', async () => {
    const prefix = uniquePrefix('wait');
    const store = new WaitStore(redis, prefix, HOUR);
    await store.event(reply(5, T + 10), T + 10);
    const early = await store.register({
      id: 'c0',
      key: 'conversation:42',
      event: 'message.sent',
      since: T,
      dueAt: null,
      run: 'job1',
      cancel: true,
    });
    expect(early).toMatchObject({ status: 'cancelled', cancel: true, match: { deliveryKey: 'evt_5' } });
    const later = await store.register({
      id: 'c1',
      key: 'contact:7',
      event: 'message.sent',
      since: T + 20,
      dueAt: null,
      run: 'job2',
      cancel: true,
    });
    expect(later.status).toBe('pending');
    expect(await store.deliver(reply(6, T + 30), T + 30)).toEqual([{ id: 'c1', run: 'job2' }]);
    expect((await store.get('c1'))?.status).toBe('cancelled');
    await store.register({ id: 'w2', key: 'conversation:9', event: 'message.sent', since: T, dueAt: T + HOUR, run: 'job3' });
    await store.forget(['c0', 'c1', 'w2']);
    expect(await store.states(['c0', 'c1', 'w2'])).toEqual([null, null, null]);
    expect(await redis.hlen(`${prefix}:wait:on:conversation:9`)).toBe(0);
    expect(await redis.zcard(`${prefix}:wait:wake`)).toBe(0);
  });

  it('keeps a run that is `<queue>|<the id up to its first colon>` as its queue alone, and gives it back whole', async () => {
    const prefix = uniquePrefix('wait');
    const store = new WaitStore(redis, prefix, HOUR);
    const id = 'd/evt_1/h%3A1:w:re:ply';
    const w = await store.register({
      id,
      key: 'conversation:42',
      event: 'message.sent',
      since: T,
      dueAt: T + HOUR,
      run: 'handlers-high|d/evt_1/h%3A1',
    });
    expect(w.run).toBe('handlers-high|d/evt_1/h%3A1');
    expect(JSON.parse((await redis.hget(`${prefix}:wait:state`, id)) ?? '{}')).toMatchObject({ q: 'handlers-high' });
    expect(JSON.parse((await redis.hget(`${prefix}:wait:state`, id)) ?? '{}')).not.toHaveProperty('run');
    // A run of another shape is kept as it is.
    await store.register({ id: 'other', key: 'conversation:42', event: 'message.sent', since: T, dueAt: T + HOUR, run: 'handlers|job9' });
    expect((await store.deliver(reply(1, T + 10), T + 10)).sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id, run: 'handlers-high|d/evt_1/h%3A1' },
      { id: 'other', run: 'handlers|job9' },
    ]);
    expect((await store.get(id))?.run).toBe('handlers-high|d/evt_1/h%3A1');
    // A state as the previous layout wrote it (`run` whole) is read as it was.
    await redis.hset(
      `${prefix}:wait:state`,
      'old',
      JSON.stringify({ s: 'pending', k: 'conversation:1', ev: 'message.sent', since: T, run: 'handlers|d/x/h', due: T + 5 }),
    );
    expect(await store.settle('old', T + 10)).toMatchObject({ status: 'timeout', run: 'handlers|d/x/h' });
  });
});
