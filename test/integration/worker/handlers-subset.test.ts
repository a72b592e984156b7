import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../../src/events/envelope.js';
import { loadHandlers } from '../../../src/handler/loader.js';
import { startWorker, type WorkerService } from '../../../src/runtime/worker.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { testRedisUrl } from '../../support/redis.js';
import { deliver, memoryLogger, testConfig, waitFor } from '../../support/service.js';

const PAIR = fileURLToPath(new URL('../../support/handlers/pair', import.meta.url));

/**
 * Two worker pools on one Redis, each running a different HANDLERS subset:
 * whichever pool fans a delivery out creates a job for every subscriber, and
 * each job runs in the pool that has its handler.
 */
describe('workers with different HANDLERS subsets', () => {
  let p: Pipeline;
  const pools: WorkerService[] = [];

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: PAIR, only: [] });
    // The pipeline's own worker ran no handler (only: []) — replace it by two pools.
    await p.worker.close(1_000);
    const all = (await loadHandlers(PAIR)).map((l) => l.handler);
    const config = testConfig({
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: p.prefix,
      WORKSPACE_API_URL: p.api.baseUrl,
      WORKSPACE_API_TOKEN: 'sbx_full_acme',
    });
    const { log } = memoryLogger();
    for (const run of [['note-on-message'], ['echo-note']]) {
      pools.push(
        await startWorker(
          { config, redisUrl: testRedisUrl(), log, set: new HandlerSet(handlerSnapshot(all, run, {})) },
          { handlers: p.handlerQueues },
        ),
      );
    }
  });
  afterAll(async () => {
    for (const pool of pools) await pool.close(1_000);
    await p?.close();
  });

  it('runs every subscriber exactly once, each in the pool that runs it', async () => {
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    const bodies = Array.from({ length: 6 }, () => messageBody('message.received', conv));
    for (const b of bodies) expect((await deliver(p.receiverUrl, b)).status).toBe(202);
    const ids = bodies.map(deliveryId);
    const states = async () => {
      const jobs = await Promise.all(
        ids.flatMap((id) => [p.handlers.getJob(jobIdFor(id, 'note-on-message')), p.handlers.getJob(jobIdFor(id, 'echo-note'))]),
      );
      return Promise.all(jobs.map((j) => (j ? j.getState() : Promise.resolve('missing'))));
    };
    // Jobs may bounce between the pools a few times (each hands back what it does not run) before landing right.
    await waitFor(async () => (await states()).every((s) => s === 'completed'), 60_000, 200).catch(async (err: Error) => {
      throw new Error(`${err.message}; job states: ${(await states()).join(', ')}`);
    });
    const written = (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` }))
      .filter((r) => r.status === 201 && !r.replay)
      .map((r) => (r.body as { body: string }).body);
    for (const id of ids) {
      expect(written.filter((w) => w === `seen ${id}`)).toHaveLength(1);
      expect(written.filter((w) => w === `echo ${id}`)).toHaveLength(1);
    }
  }, 90_000);
});
