/**
 * The poller in a world (src/queue/world.ts): a fresh sandbox reuses order ids, so each world takes
 * its own baseline and names its derived deliveries apart; the plain (real-workspace) names are untouched.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredDelivery } from '../../../../src/queue/delivery.js';
import { pollKeys, pollOnce, type PollerDeps } from '../../../../src/sources/poll/poller.js';
import { testRedisUrl, uniquePrefix } from '../../../support/redis.js';
import { startSandbox, type SandboxHarness } from '../../../support/sandbox.js';
import { memoryLogger } from '../../../support/service.js';

describe('pollOnce in a world', () => {
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

  it('takes a baseline per world and keys its derived deliveries by world', async () => {
    const prefix = uniquePrefix('pollworld');
    const put: StoredDelivery[] = [];
    const deps = (world: string | null): PollerDeps => ({
      redis,
      prefix,
      log: memoryLogger().log,
      taskLookaheadMs: 0,
      lockMs: 60_000,
      world,
      ingest: {
        put: async (d: StoredDelivery) => {
          put.push(d);
          return 'accepted' as const;
        },
      },
      api: () => sandbox.client(),
    });
    const wanted = new Set(['order.created'] as const);

    // World A: the first poll is its baseline; an order created after it is order.created, keyed in A.
    expect((await pollOnce(deps('sandbox-a'), wanted)).orders?.baseline).toBe(true);
    const created = await sandbox.client().orders.create({ contact_id: 35, items: [{ name: 'Poster', quantity: 1, unit_price: 12 }] });
    const { id } = created;
    await pollOnce(deps('sandbox-a'), wanted);
    expect(put.map((d) => d.key)).toEqual([`@sandbox-a:order.created:${id}`]);
    expect(await redis.exists(pollKeys(prefix, 'sandbox-a').ordersCursor)).toBe(1);

    // World B (a fresh sandbox): nothing of A's snapshot applies; its first poll is a baseline of its own, announcing nothing.
    expect(await redis.exists(pollKeys(prefix, 'sandbox-b').ordersCursor)).toBe(0);
    const b = await pollOnce(deps('sandbox-b'), wanted);
    expect(b.orders?.baseline).toBe(true);
    expect(put).toHaveLength(1);
    // The plain names (a real workspace) were never touched.
    expect(await redis.exists(pollKeys(prefix).ordersCursor)).toBe(0);
  });
});
