import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeClaims, changeClaimKey } from '../../../src/queue/change.js';
import { FanOutChecks, type CheckedEvent } from '../../../src/queue/fan-out-check.js';
import { WaitStore } from '../../../src/queue/waits/wait-store.js';
import { fixedWorld } from '../../../src/queue/world.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const HOUR = 3_600_000;
const T = Date.parse('2026-11-27T10:00:00Z');
const webhook = (deliveryKey: string) => ({ deliveryKey, source: 'webhook', atMs: T });

/** A delivery of `name` on conversation 42 as fan-out checks it; `made` counts the times its body and keys were made. */
function event(n: number, name = 'message.received'): CheckedEvent & { made: number } {
  const e = {
    deliveryKey: `evt_${n}`,
    name,
    receivedAt: T + n,
    made: 0,
    full: () => {
      e.made += 1;
      return { body: `{"id":"evt_${n}"}`, keys: ['conversation:42'] };
    },
  };
  return e;
}

/** Counts the commands `redis` sends (each script call is one EVALSHA, or an EVAL the first time). */
function countCommands(redis: Redis): { readonly n: number } {
  const counter = { n: 0 };
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    counter.n += 1;
    return send(...args);
  };
  return counter;
}

/**
 * The fan-out checks of one delivery in one script call (lua/fanOutCheck-n.lua): the change claim and
 * the durable waits. The claim's own rules are in change-claims.test.ts, the waits' in wait-store.test.ts;
 * these are the rules of the two together.
 */
describe('fan-out checks: change claim and waits in one call (real Redis)', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(testRedisUrl());
  });
  afterAll(() => {
    redis.disconnect();
  });

  function checks(prefix: string, world: string | null = null) {
    const waits = new WaitStore(redis, prefix, HOUR);
    return { waits, checks: new FanOutChecks(redis, new ChangeClaims(redis, prefix, HOUR, fixedWorld(world)), waits) };
  }

  it('a duplicate change answers no wait and logs nothing; the delivery holding the claim does both', async () => {
    const prefix = uniquePrefix('foc');
    const { waits, checks: c } = checks(prefix);
    await waits.register({ id: 'run1:reply', key: 'conversation:42', event: 'message.received', since: 0, dueAt: T + HOUR, run: 'q|run1' });
    const claim = (n: number) => ({ changeKey: 'message.received:9', who: webhook(`evt_${n}`) });
    // evt_2 first: it holds the change, logs and answers.
    expect(await c.check(claim(2), event(2), T)).toEqual({ claimed: true, woken: [{ id: 'run1:reply', run: 'q|run1' }] });
    // A wait that began after evt_2 (it does not look back to it): evt_3 would answer it.
    await waits.register({
      id: 'run2:reply',
      key: 'conversation:42',
      event: 'message.received',
      since: T + 2,
      dueAt: T + HOUR,
      run: 'q|run2',
    });
    // evt_3 is another delivery of the same change (a message happens once): nothing answered, nothing logged.
    const dup = event(3);
    expect(await c.check(claim(3), dup, T)).toEqual({ claimed: false, woken: [] });
    expect((await waits.get('run2:reply'))?.status).toBe('pending');
    expect(await redis.zrange(`${prefix}:wait:log:conversation:42`, '0', '-1')).toEqual(['evt_2']);
    expect(await redis.hkeys(`${prefix}:wait:body:conversation:42`)).toEqual(['evt_2']);
    // Its body was not even made (the name was known watched, so it went with the call, but the claim came first).
    expect(dup.made).toBe(1);
    // evt_2 again (a retried events job): it still holds the claim; a repeat of a logged delivery answers nothing new.
    expect(await c.check(claim(2), event(2), T)).toEqual({ claimed: true, woken: [] });
  });

  it('the claim is kept for the dedupe TTL under the world of the delivery', async () => {
    const prefix = uniquePrefix('foc');
    const { checks: c } = checks(prefix, 'w1');
    expect((await c.check({ changeKey: 'message.received:9', who: webhook('evt_1') }, event(1), T)).claimed).toBe(true);
    const ttl = await redis.pttl(changeClaimKey(prefix, 'message.received:9', 'w1'));
    expect(ttl).toBeGreaterThan(HOUR - 60_000);
    expect(ttl).toBeLessThanOrEqual(HOUR);
    expect(await redis.exists(changeClaimKey(prefix, 'message.received:9'))).toBe(0);
  });

  it('a name nobody watches: one call, its body and keys never made, nothing logged', async () => {
    const prefix = uniquePrefix('foc');
    const { checks: c } = checks(prefix);
    const sent = countCommands(redis);
    const e = event(1);
    expect(await c.check({ changeKey: 'message.received:9', who: webhook('evt_1') }, e, T)).toEqual({ claimed: true, woken: [] });
    expect(sent.n).toBe(1);
    expect(e.made).toBe(0);
    expect(await redis.exists(`${prefix}:wait:log:conversation:42`)).toBe(0);
    expect(await redis.exists(changeClaimKey(prefix, 'message.received:9'))).toBe(1);
  });

  it('a watched name the process did not know: the event is logged for lookbacks and answers waits; from then on one call each', async () => {
    const prefix = uniquePrefix('foc');
    const { waits, checks: c } = checks(prefix);
    // Another process registered a wait for the name: it is watched from then on.
    await waits.register({ id: 'run1:reply', key: 'conversation:42', event: 'message.received', since: 0, dueAt: T + HOUR, run: 'q|run1' });
    const sent = countCommands(redis);
    const first = event(1);
    expect(await c.check({ changeKey: 'message.received:1', who: webhook('evt_1') }, first, T)).toEqual({
      claimed: true,
      woken: [{ id: 'run1:reply', run: 'q|run1' }],
    });
    // The first call without the body, the second with it (and without the claim).
    expect(sent.n).toBe(2);
    expect(first.made).toBe(1);
    expect(await waits.get('run1:reply')).toMatchObject({ status: 'matched', match: { deliveryKey: 'evt_1', body: '{"id":"evt_1"}' } });
    const before = sent.n;
    const second = event(2);
    expect(await c.check({ changeKey: 'message.received:2', who: webhook('evt_2') }, second, T)).toEqual({ claimed: true, woken: [] });
    expect(sent.n - before).toBe(1);
    // Logged: a wait registered now looks back and finds it.
    const late = await waits.register({
      id: 'run2:reply',
      key: 'conversation:42',
      event: 'message.received',
      since: T + 1,
      dueAt: T + HOUR,
      run: 'q|run2',
    });
    expect(late).toMatchObject({ status: 'matched', match: { deliveryKey: 'evt_2', body: '{"id":"evt_2"}' } });
  });

  it('an event without a change key: the waits part alone', async () => {
    const prefix = uniquePrefix('foc');
    const { waits, checks: c } = checks(prefix);
    await waits.watch(['conversation.assigned']);
    await waits.register({
      id: 'run1:a',
      key: 'conversation:42',
      event: 'conversation.assigned',
      since: 0,
      dueAt: T + HOUR,
      run: 'q|run1',
    });
    expect(await c.check(null, event(1, 'conversation.assigned'), T)).toEqual({ claimed: true, woken: [{ id: 'run1:a', run: 'q|run1' }] });
    expect(await redis.keys(`${prefix}:change:*`)).toEqual([]);
  });

  it('deliveries checked in one tick share one call, one after the other: each gets its own answer', async () => {
    const prefix = uniquePrefix('foc');
    const { waits, checks: c } = checks(prefix);
    const claim = (n: number, change: string) => ({ changeKey: change, who: webhook(`evt_${n}`) });
    const sent = countCommands(redis);
    // evt_2 is a second delivery of evt_1's change; evt_3 is another change.
    const unwatched = await Promise.all([
      c.check(claim(1, 'message.received:1'), event(1), T),
      c.check(claim(2, 'message.received:1'), event(2), T),
      c.check(claim(3, 'message.received:3'), event(3), T),
    ]);
    expect(unwatched.map((r) => r.claimed)).toEqual([true, false, true]);
    expect(sent.n).toBe(1);
    // A watched name this process knows (evt_4 taught it): a wait answered by the first of two deliveries of one change.
    await waits.watch(['message.received']);
    await c.check(claim(4, 'message.received:4'), event(4), T);
    await waits.register({
      id: 'run1:reply',
      key: 'conversation:42',
      event: 'message.received',
      since: T + 4,
      dueAt: T + HOUR,
      run: 'q|run1',
    });
    const before = sent.n;
    const watched = await Promise.all([
      c.check(claim(5, 'message.received:5'), event(5), T),
      c.check(claim(6, 'message.received:5'), event(6), T),
      c.check(claim(7, 'message.received:7'), event(7), T),
    ]);
    expect(sent.n - before).toBe(1);
    expect(watched).toEqual([
      { claimed: true, woken: [{ id: 'run1:reply', run: 'q|run1' }] },
      { claimed: false, woken: [] },
      { claimed: true, woken: [] },
    ]);
    expect(await redis.zrange(`${prefix}:wait:log:conversation:42`, '0', '-1')).toEqual(['evt_4', 'evt_5', 'evt_7']);
  });
});
