/**
 * The snapshot of event fields against the sandbox over HTTP and a real Redis:
 * a baseline per world, changes journaled before the snapshot moves on, kept
 * while no delivery claimed them (a refresher running through an outage never
 * absorbs a lost change), dropped once claimed; and its Redis keys small.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeClaims } from '../../../../src/queue/change.js';
import { pollKeys } from '../../../../src/sources/poll/poller.js';
import { refreshSnapshot, SETTLE_MS, snapshotSource, type SnapshotDeps } from '../../../../src/sources/poll/snapshot.js';
import { testRedisUrl, uniquePrefix } from '../../../support/redis.js';
import { startSandbox, type SandboxHarness } from '../../../support/sandbox.js';
import { memoryLogger } from '../../../support/service.js';

describe('snapshot refresh (sandbox over HTTP, real Redis)', () => {
  let redis: Redis;
  let sandbox: SandboxHarness;
  beforeAll(async () => {
    redis = new Redis(testRedisUrl());
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    redis.disconnect();
    await sandbox.close();
  });

  it('journals a lost change and keeps it through refreshes until a delivery claims it; per world; lock shared', async () => {
    const prefix = uniquePrefix('snap');
    let now = Date.now();
    const claims = new ChangeClaims(redis, prefix, 86_400_000);
    const logger = memoryLogger();
    const deps = (world: string | null): SnapshotDeps => ({
      redis,
      prefix,
      world,
      api: sandbox.client(),
      log: logger.log,
      claims,
      ttlMs: 86_400_000,
      lockMs: 60_000,
      now: () => now,
    });
    const api = sandbox.client();
    const lead = (await api.leads.list({ outcome: 'open' }).firstPage()).data[0]!;

    const first = await refreshSnapshot(deps('w1'), ['leads', 'conversations', 'contacts']);
    expect(first.kinds).toMatchObject({ leads: { baseline: true }, conversations: { baseline: true }, contacts: { baseline: true } });
    expect(await redis.exists(`${pollKeys(prefix, 'w1').snapshot}:snap:leads:meta`)).toBe(1);
    expect(await redis.exists(`${pollKeys(prefix).snapshot}:snap:leads:meta`)).toBe(0);

    await sandbox.hook('POST', `/leads/${lead.id}/outcome`, { outcome: 'won' });
    const seen = await refreshSnapshot(deps('w1'), ['leads']);
    expect(seen).toMatchObject({ ran: true, kinds: { leads: { baseline: false, changes: 1 } }, pending: 1 });
    // Refreshed again after the settle time with no delivery: still pending (the next refresh does not see it, the journal keeps it).
    now += SETTLE_MS + 1;
    expect(await refreshSnapshot(deps('w1'), ['leads'])).toMatchObject({ kinds: { leads: { changes: 0 } }, pending: 1, dropped: 0 });
    const source = snapshotSource(deps('w1'));
    const { changes, untracked } = await source.changes({ since: 0, until: now + 1 }, new Set(['lead.won', 'contact.lifecycle_changed']));
    expect(untracked).toEqual([]);
    expect(changes.map((c) => [c.event, c.changeKey, c.data['outcome']])).toEqual([['lead.won', `lead.won:${lead.id}`, 'won']]);

    // Another world never saw it.
    await refreshSnapshot(deps('w2'), ['leads']);
    expect(await refreshSnapshot(deps('w2'), ['leads'])).toMatchObject({ pending: 0 });

    // A delivery of the win claims it (its event after the state before): the next refresh drops it.
    const w1Claims = new ChangeClaims(redis, prefix, 86_400_000, { current: async () => ({ name: 'w1', since: 0, previous: null }) });
    expect(
      await w1Claims.claim(`lead.won:${lead.id}`, { deliveryKey: 'evt_won', source: 'webhook', atMs: (changes[0]?.afterMs ?? 0) + 5_000 }),
    ).toBe(true);
    const deps1 = { ...deps('w1'), claims: w1Claims };
    expect(await refreshSnapshot(deps1, ['leads'])).toMatchObject({ pending: 0, dropped: 1 });

    // One refresh at a time: a held lock makes a tick do nothing.
    await redis.set(pollKeys(prefix).snapshotLock, 'someone', 'PX', 60_000);
    expect(await refreshSnapshot(deps1, ['leads'])).toMatchObject({ ran: false });
    await redis.del(pollKeys(prefix).snapshotLock);

    // Nothing personal is logged: counts and kinds only.
    expect(logger.lines.join('')).not.toMatch(/@example\.com|Alice|Bob|Carol/);
  });
});
