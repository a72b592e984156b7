import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AFTER_SKEW_MS, ChangeClaims, changeClaimKey, CLOCK_SKEW_MS } from '../../../src/queue/change.js';
import { reconcileDeliveryKey } from '../../../src/events/change-key.js';
import { fixedWorld, markWorld, newWorldName, readWorld, WorldMark } from '../../../src/queue/world.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const HOUR = 3_600_000;
const T = Date.parse('2026-11-20T10:00:00Z');
const webhook = (deliveryKey: string, atMs: number | null = T) => ({ deliveryKey, source: 'webhook', atMs });
const reconciled = (deliveryKey: string, atMs: number) => ({ deliveryKey, source: 'reconcile', atMs });

describe('change claims (real Redis)', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(testRedisUrl());
  });
  afterAll(() => {
    redis.disconnect();
  });

  it('a claim belongs to its world: a fresh sandbox (new world) claims the same record ids anew, and reconcile counts only its own', async () => {
    const prefix = uniquePrefix('world');
    const api = 'http://127.0.0.1:4010/api/v1';
    expect(await readWorld(redis, prefix, api)).toBeNull();
    const first = newWorldName();
    await markWorld(redis, prefix, api, first, T);
    expect(await readWorld(redis, prefix, api)).toEqual({ name: first, since: T, previous: null });
    // Another API URL has no mark.
    expect(await readWorld(redis, prefix, 'https://api.example.com/v1')).toBeNull();

    const mark = new WorldMark(redis, prefix, api, 0);
    const claims = new ChangeClaims(redis, prefix, 7 * 24 * HOUR, mark);
    expect(await claims.claim('message.received:41', { ...webhook('evt_a'), receivedAtMs: T + 1 })).toBe(true);
    expect(await claims.claim('message.received:41', { ...webhook('evt_b'), receivedAtMs: T + 2 })).toBe(false);

    // dev restarted: a new sandbox reuses message id 41 for a new message.
    const second = newWorldName();
    expect(second).not.toBe(first);
    await markWorld(redis, prefix, api, second, T + HOUR);
    expect(await readWorld(redis, prefix, api)).toEqual({ name: second, since: T + HOUR, previous: first });
    expect(await claims.claimed(['message.received:41'])).toEqual([false]);
    // The last run's backlog (received before the new world began) is claimed in its own world: a
    // delivery of the old message 41 still waiting is a duplicate there, and takes nothing from the new one.
    expect(await claims.claim('message.received:41', { ...webhook('evt_b_retry'), receivedAtMs: T + 3 })).toBe(false);
    expect(await claims.claim('message.received:42', { ...webhook('evt_old_42'), receivedAtMs: T + 4 })).toBe(true);
    expect(await redis.exists(changeClaimKey(prefix, 'message.received:42', first))).toBe(1);
    // The new world's message 41 and 42 run.
    expect(await claims.claim('message.received:41', { ...webhook('evt_c'), receivedAtMs: T + HOUR + 1 })).toBe(true);
    expect(await claims.claim('message.received:42', { ...webhook('evt_d'), receivedAtMs: T + HOUR + 2 })).toBe(true);
    expect(await claims.claimed(['message.received:41'])).toEqual([true]);
    expect(await redis.exists(changeClaimKey(prefix, 'message.received:41', second))).toBe(1);
    // A real workspace (no world) keeps the plain key names.
    expect(changeClaimKey(prefix, 'message.received:41')).toBe(`${prefix}:change:message.received:41`);
    expect(await new ChangeClaims(redis, prefix, HOUR, fixedWorld(null)).claimed(['message.received:41'])).toEqual([false]);
  });

  it('a lead won again (reopened, won) is a new change; a late copy of the same win is not', async () => {
    const claims = new ChangeClaims(redis, uniquePrefix('rewin'), 7 * 24 * HOUR);
    expect(await claims.claim('lead.won:48', webhook('evt_win1', T))).toBe(true);
    // The same delivery again (a retried fan-out) still holds it.
    expect(await claims.claim('lead.won:48', webhook('evt_win1', T))).toBe(true);
    // A reconciled copy of the win already received runs nothing.
    expect(await claims.claim('lead.won:48', reconciled('rc:lead.won:48', T + HOUR))).toBe(false);
    // Reopened and won again: a second real outcome, another delivery id.
    expect(await claims.claim('lead.won:48', webhook('evt_win2', T + 2 * HOUR))).toBe(true);
    // A reconcile after the second win: the same (latest) change, nothing to run.
    expect(await claims.claim('lead.won:48', reconciled('rc:lead.won:48', T + 3 * HOUR))).toBe(false);
  });

  it('after reconcile caught a win up, the late real delivery of that win runs nothing, a later win runs', async () => {
    const claims = new ChangeClaims(redis, uniquePrefix('rclate'), 7 * 24 * HOUR);
    const seen = T + 20 * 60_000; // reconcile listed the lead as won 20 minutes after the win
    expect(await claims.claim('lead.lost:7', reconciled('rc:lead.lost:7', seen))).toBe(true);
    // The real delivery of that loss, late: its event is older than what reconcile saw.
    expect(await claims.claim('lead.lost:7', webhook('evt_loss', T))).toBe(false);
    // Within the clock skew of the observation: still the same change.
    expect(await claims.claim('lead.lost:7', webhook('evt_loss_b', seen + CLOCK_SKEW_MS))).toBe(false);
    // No event time: cannot be told apart, so it is the same change.
    expect(await claims.claim('lead.lost:7', webhook('evt_loss_c', null))).toBe(false);
    // Reopened and lost again after reconcile saw it: new.
    expect(await claims.claim('lead.lost:7', webhook('evt_loss2', seen + CLOCK_SKEW_MS + 1_000))).toBe(true);
  });

  it('changes that happen once keep their first delivery: a second real delivery of a message is a duplicate', async () => {
    const prefix = uniquePrefix('once');
    const claims = new ChangeClaims(redis, prefix, 7 * 24 * HOUR);
    expect(await claims.claim('message.received:9', webhook('evt_1'))).toBe(true);
    expect(await claims.claim('message.received:9', webhook('evt_2', T + HOUR))).toBe(false);
    // A claim written by the previous version (the delivery key alone) is read as that delivery's.
    await redis.set(changeClaimKey(prefix, 'lead.won:5'), 'evt_old', 'PX', HOUR);
    expect(await claims.claim('lead.won:5', webhook('evt_old'))).toBe(true);
    expect(await claims.claim('lead.won:5', reconciled('rc:lead.won:5', T))).toBe(false);
    expect(await claims.claim('lead.won:5', webhook('evt_new'))).toBe(true);
    // A reconciled copy's claim of the previous version (its delivery key rc:…) is read as reconcile's.
    await redis.set(changeClaimKey(prefix, 'lead.won:6'), 'rc:lead.won:6', 'PX', HOUR);
    expect(await claims.claim('lead.won:6', webhook('evt_late_6', null))).toBe(false);
  });

  it('snapshot changes: a reconciled copy naming when the state before was seen takes over an older claim of the key, never a newer one', async () => {
    const prefix = uniquePrefix('after');
    const claims = new ChangeClaims(redis, prefix, 7 * 24 * HOUR);
    const key = 'conversation.assigned:42:user:7';
    // Assigned to 7 yesterday (received), then to 8, then to 7 again while webhooks were lost.
    expect(await claims.claim(key, webhook('evt_yesterday', T - 24 * HOUR))).toBe(true);
    const seenWith8 = T - HOUR;
    const copy = reconcileDeliveryKey(key, null, seenWith8);
    expect(await claims.received([{ changeKey: key, afterMs: seenWith8, deliveryKey: copy }])).toEqual([false]);
    expect(await claims.claim(key, reconciled(copy, T))).toBe(true);
    expect(await claims.received([{ changeKey: key, afterMs: seenWith8, deliveryKey: copy }])).toEqual([true]);
    // The lost webhook arriving late (its event before reconcile saw it) runs nothing; a second copy of the same change neither.
    expect(await claims.claim(key, webhook('evt_lost', T - HOUR / 2))).toBe(false);
    expect(await claims.claim(key, reconciled(reconcileDeliveryKey(key, null, seenWith8 + 1), T + 1))).toBe(false);
    // Assigned to 7 once more later: a real delivery after the copy's observation is a new change.
    expect(await claims.claim(key, webhook('evt_tomorrow', T + 24 * HOUR))).toBe(true);

    // A webhook's event time and the snapshot's time are both on the API's clock: within AFTER_SKEW_MS it is the same change.
    const lead = 'lead.won:5';
    expect(await claims.claim(lead, webhook('evt_won', T - AFTER_SKEW_MS / 2))).toBe(true);
    expect(await claims.received([{ changeKey: lead, afterMs: T, deliveryKey: reconcileDeliveryKey(lead, null, T) }])).toEqual([true]);
    expect(await claims.claim(lead, reconciled(reconcileDeliveryKey(lead, null, T), T + HOUR))).toBe(false);
    // Won 30 s before the snapshot saw it open again: an earlier win (reopened since), so a new one now.
    const lead6 = 'lead.won:6';
    expect(await claims.claim(lead6, webhook('evt_won_6', T - 30_000))).toBe(true);
    expect(await claims.received([{ changeKey: lead6, afterMs: T, deliveryKey: reconcileDeliveryKey(lead6, null, T) }])).toEqual([false]);
    expect(await claims.claim(lead6, reconciled(reconcileDeliveryKey(lead6, null, T), T + 60_000))).toBe(true);
    // A copy's claim is timed by our clock: against it the full CLOCK_SKEW_MS applies.
    const lead7 = 'lead.won:7';
    expect(await claims.claim(lead7, reconciled('rc:lead.won:7', T - CLOCK_SKEW_MS / 2))).toBe(true);
    expect(await claims.received([{ changeKey: lead7, afterMs: T, deliveryKey: reconcileDeliveryKey(lead7, null, T) }])).toEqual([true]);
    // A claim of unknown time counts as received (nothing to tell it was earlier).
    await redis.set(changeClaimKey(prefix, 'conversation.opened:9'), 'evt_untimed', 'PX', HOUR);
    expect(
      await claims.received([
        { changeKey: 'conversation.opened:9', afterMs: T, deliveryKey: 'rc:x~1' },
        { changeKey: 'conversation.opened:10', afterMs: T, deliveryKey: 'rc:y~1' },
      ]),
    ).toEqual([true, false]);
    expect(await claims.claim('conversation.opened:9', reconciled(reconcileDeliveryKey('conversation.opened:9', null, T), T))).toBe(false);
  });
});
