/**
 * The handler slots of a deployment of many are shared by its workspaces (src/worker/fair.ts): with
 * WORKER_CONCURRENCY=1, a run of acme holding the one slot keeps other's run from starting, although other's own
 * BullMQ worker has taken the job; once acme's run ends, other's runs. (A deployment of one uses no pool.)
 */
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspacePrefix } from '../../../src/config/index.js';
import { jobIdFor } from '../../../src/events/index.js';
import { HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { testRedisUrl } from '../../support/redis.js';
import { waitFor } from '../../support/service.js';
import { sleep } from '../../../src/util/index.js';
import { startTwoWorkspaces, type TwoWorkspaces } from '../../support/workspaces.js';
import { Redis } from 'ioredis';

const g = globalThis as { __syWsGate?: Promise<void>; __syWsHeld?: string[] };

describe('a deployment of many shares its handler slots', () => {
  let w: TwoWorkspaces;
  let redis: Redis;
  beforeAll(async () => {
    w = await startTwoWorkspaces({ WORKER_CONCURRENCY: '1' });
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: 3 });
  });
  afterAll(async () => {
    redis?.disconnect();
    await w?.close();
  });

  it("one slot: other's run waits for acme's to end, with its job taken by other's worker", async () => {
    let open: () => void = () => undefined;
    g.__syWsGate = new Promise<void>((r) => (open = r));
    g.__syWsHeld = [];
    expect((await w.deliver('acme', messageBody('message.received', 9_201, 'hold'))).status).toBe(202);
    await waitFor(() => g.__syWsHeld?.length === 1, 15_000);
    const body = messageBody('message.received', 9_202, 'b1');
    expect((await w.deliver('other', body)).status).toBe(202);
    const queue = new Queue(HANDLERS_QUEUE, { connection: redis, prefix: workspacePrefix(w.prefix, 'other') });
    try {
      await waitFor(async () => (await (await queue.getJob(jobIdFor(deliveryId(body), 'ws-count')))?.getState()) === 'active', 15_000);
      // Taken, and held back by the pool: a second later it has still written nothing.
      await sleep(1_000);
      expect(await w.written('other')).toEqual([]);
      open();
      await waitFor(async () => (await w.written('other')).includes('count 9202 1 b1'), 15_000);
      expect(await w.written('acme')).toContain('count 9201 1 hold');
    } finally {
      open();
      await queue.close();
    }
  }, 60_000);
});
