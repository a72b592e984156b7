/**
 * Schedules in a deployment of many: each workspace's Config starts its own timers on its own `schedules`
 * queue (its prefix), so a schedule runs once per workspace, or only in the workspaces it names; a schedule
 * naming a workspace the deployment does not serve stops start-up. On the test's real Redis.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../../../src/config/index.js';
import { defineSchedule, HandlerDefinitionError, type Schedule } from '../../../../src/index.js';
import { HandlerSet, handlerSnapshot } from '../../../../src/handler/set.js';
import { startSources } from '../../../../src/sources/index.js';
import type { Timers } from '../../../../src/sources/timers.js';
import { testRedisUrl, uniquePrefix } from '../../../support/redis.js';
import { memoryLogger, waitFor } from '../../../support/service.js';
import { workspacesDeployment } from '../../../support/workspaces.js';

const runs: { schedule: string; workspace: string }[] = [];
const everywhere = defineSchedule({
  id: 'everywhere',
  every: '1s',
  handle: (ctx) => void runs.push({ schedule: 'everywhere', workspace: ctx.workspace.id }),
});
const acmeOnly = defineSchedule({
  id: 'acme-only',
  every: '1h',
  workspaces: ['acme'],
  handle: (ctx) => void runs.push({ schedule: 'acme-only', workspace: ctx.workspace.id }),
});

describe('schedules per workspace', () => {
  let redis: Redis;
  const started: Timers[] = [];
  beforeAll(() => {
    redis = new Redis(testRedisUrl());
  });
  afterAll(async () => {
    await Promise.allSettled(started.map((t) => t.close()));
    redis.disconnect();
  });

  const start = async (config: Config, schedules: Schedule[]) => {
    const timers = await startSources({
      config,
      redisUrl: testRedisUrl(),
      log: memoryLogger().log,
      set: new HandlerSet(handlerSnapshot([], undefined, {}, schedules)),
      commands: redis,
      api: undefined,
      workerOptions: {},
    });
    started.push(timers);
    return timers;
  };
  const schedulers = async (config: Config): Promise<string[]> => {
    const q = new Queue('schedules', { connection: redis, prefix: config.queuePrefix });
    try {
      return (await q.getJobSchedulers(0, -1)).map((s) => s.key).sort();
    } finally {
      await q.close();
    }
  };

  it('a schedule naming no workspace has a job scheduler in each; one naming acme, in acme only; each run sees its workspace', async () => {
    const { configs } = workspacesDeployment(['acme', 'beta'], { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: uniquePrefix('ws-sched') });
    const [acme, beta] = configs as [Config, Config];
    expect(acme.queuePrefix).not.toBe(beta.queuePrefix);
    for (const c of configs) await start(c, [everywhere, acmeOnly]);
    expect(await schedulers(acme)).toEqual(['acme-only', 'everywhere']);
    expect(await schedulers(beta)).toEqual(['everywhere']);
    // The first tick of each scheduler runs at once: `everywhere` in both workspaces, `acme-only` in acme.
    await waitFor(() => ['acme', 'beta'].every((w) => runs.some((r) => r.schedule === 'everywhere' && r.workspace === w)), 15_000);
    await waitFor(() => runs.some((r) => r.schedule === 'acme-only'), 15_000);
    expect(runs.filter((r) => r.schedule === 'acme-only').map((r) => r.workspace)).toEqual(['acme']);
  });

  it('refuses a schedule naming a workspace the deployment does not serve: the schedule, the id, did-you-mean', async () => {
    const prefix = uniquePrefix('ws-sched');
    const { configs } = workspacesDeployment(['acme', 'beta'], { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix });
    const typo = defineSchedule({ id: 'typo', every: '1h', workspaces: ['acme', 'betta'], handle: () => undefined });
    const err = await start(configs[0] as Config, [everywhere, typo]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HandlerDefinitionError);
    expect((err as Error).message).toMatch(
      /^schedule "typo": "workspaces" names "betta", which is not a workspace of this deployment \(did you mean "beta"\?\); its workspaces \(WORKSPACES_FILE .*workspaces\.json\): acme, beta$/,
    );
    // Nothing was registered.
    expect(await schedulers(configs[0] as Config)).toEqual([]);
  });
});
