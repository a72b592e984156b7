/** The one API client builder with shared limits in Redis: live calls take the token's window only; catch-up calls take the RECONCILE_BUDGET window first. */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configuredApiClients } from '../../../src/clients/api-clients.js';
import { RECONCILE_CALL } from '../../../src/sources/reconcile/client.js';
import { contact, fakeFetch } from '../../support/fake-fetch.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

/** The settings the builder reads: burst 30, RECONCILE_BUDGET 0.2. */
const configOf = (prefix: string) => ({
  workspaceApiUrl: 'http://127.0.0.1:1/api/v1',
  workspaceApiToken: 'tok',
  workspaceApiBurst: 30,
  queuePrefix: prefix,
  reconcile: { everyMs: undefined, windowMs: 1, budget: 0.2 },
});

describe('configuredApiClients with shared limits', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(testRedisUrl());
  });
  afterAll(() => redis.disconnect());

  it('a catch-up client spends the reconcile window, a live one does not', async () => {
    const prefix = uniquePrefix('apibudget');
    const f = fakeFetch(() => ({ body: { data: contact(7) } }));
    const config = configOf(prefix);
    const clients = configuredApiClients(config, redis, { fetch: f.fetch });
    const keys = async (window: string) => redis.keys(`${prefix}:${window}:*`);

    await clients?.({ priority: 'high' }).contacts.get(7);
    expect(await keys('api-rate')).not.toEqual([]);
    expect(await keys('reconcile-rate')).toEqual([]);

    await clients?.(RECONCILE_CALL).contacts.get(7);
    await clients?.({ budget: 'catch-up' }).contacts.get(7);
    expect(await keys('reconcile-rate')).not.toEqual([]);
    expect(f.calls).toHaveLength(3);
  });

  it("a rerun client spends the re-runs' own window (RERUN_SHARE of the burst), not reconcile's", async () => {
    const prefix = uniquePrefix('apibudget');
    const f = fakeFetch(() => ({ body: { data: contact(7) } }));
    const config = { ...configOf(prefix), rerun: { share: 0.5 } };
    const clients = configuredApiClients(config, redis, { fetch: f.fetch });
    const keys = async (window: string) => redis.keys(`${prefix}:${window}:*`);
    await clients?.({ budget: 'rerun', priority: 'low' }).contacts.get(7);
    expect(await keys('rerun-rate')).not.toEqual([]);
    expect(await keys('reconcile-rate')).toEqual([]);
    expect(await keys('api-rate')).not.toEqual([]);
  });
});
