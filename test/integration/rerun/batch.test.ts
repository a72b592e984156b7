/**
 * Rerun batches through the pipeline (receiver, worker, sandbox, shared Redis): the plan from the history,
 * a batch fed by the worker's feeder into `handlers-low` with a job per delivery, feeding repeated adding
 * nothing, a cancel removing the runs not started.
 */
import { fileURLToPath } from 'node:url';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadHandlerDir } from '../../../src/handler/loader.js';
import type { Handler } from '../../../src/handler/define.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { startRerun, rerunStatus, listReruns } from '../../../src/rerun/batch.js';
import { cancelRerun } from '../../../src/rerun/cancel.js';
import { feedBatch } from '../../../src/rerun/feed.js';
import { eventsJobBodies } from '../../../src/rerun/bodies.js';
import type { RerunDeps } from '../../../src/rerun/deps.js';
import { planRerun } from '../../../src/rerun/plan.js';
import { RerunSelectionError } from '../../../src/rerun/selection.js';
import { messageBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver } from '../../support/service.js';
import { waitFor } from '../../support/wait.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/rerun-batch', import.meta.url));
const keyOf = (body: string) => (JSON.parse(body) as { id: string }).id;

describe('rerun batches', () => {
  let p: Pipeline;
  let deps: RerunDeps;
  let conv: number;
  const keys: string[] = [];

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
    const handlers: Handler[] = (await loadHandlerDir(HANDLERS)).handlers.map((l) => l.handler);
    deps = { redis: p.redis, prefix: p.prefix, handlers, budget: { burst: 100, share: 0.5, callsPer10s: 50 } };
    conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    for (let i = 0; i < 6; i++) {
      const body = messageBody('message.received', conv, `order ${i}`);
      expect((await deliver(p.receiverUrl, body)).status).toBe(202);
      keys.push(keyOf(body));
    }
    await waitFor(async () => (await p.requests({ method: 'POST' })).length >= 6, 20_000);
    // The history records each run when its attempt ended.
    await waitFor(async () => (await planRerun(deps, { handler: 'rerun-note' })).items.length === 6, 20_000, 100);
  });
  afterAll(async () => p?.close());

  const rerunJobs = async () =>
    (await p.handlerQueues.low.getJobs(['completed', 'waiting', 'active', 'delayed', 'prioritized', 'failed'])) as Job<HandlerJobData>[];

  it('plans from the history: deliveries per event, the calls of their original runs, the time at the share', async () => {
    const plan = await planRerun(deps, { handler: 'rerun-note', event: 'message.received' });
    expect(plan.items.map((i) => i.key).sort()).toEqual([...keys].sort());
    expect(plan.byEvent).toEqual([{ event: 'message.received', deliveries: 6, calls: 6 }]);
    expect(plan.calls).toBe(6);
    expect(plan.estimatedMs).toBe(Math.ceil((6 / 50) * 10_000));
  });

  it('refuses a handler not in the project or an event it does not handle, saying which', async () => {
    await expect(planRerun(deps, { handler: 'rerun-nte' })).rejects.toThrow(/no handler "rerun-nte".*did you mean "rerun-note"/);
    await expect(planRerun(deps, { handler: 'rerun-note', event: 'lead.won' })).rejects.toThrow(RerunSelectionError);
    await expect(planRerun(deps, { handler: 'rerun-note', event: 'lead.won' })).rejects.toThrow(
      /does not handle lead.won; it is subscribed to message.received/,
    );
  });

  it('runs each delivery once more as a new run in handlers-low, fed by the worker, and ends the batch', async () => {
    const writes = async () => (await p.requests({ method: 'POST' })).filter((r) => r.status === 201 && !r.replay);
    expect(await writes()).toHaveLength(6);
    const started = await startRerun(deps, { handler: 'rerun-note' });
    expect(started.total).toBe(6);
    const done = await waitFor(
      async () => {
        const s = await rerunStatus(deps, started.batch);
        return s.state === 'done' ? s : null;
      },
      30_000,
      100,
    );
    expect(done).toMatchObject({ total: 6, fed: 6, done: 6, failed: 0, cancelled: 0, open: 0, handler: 'rerun-note' });
    // New runs, not retries: each wrote its note again, with Idempotency-Keys of its own.
    const all = await writes();
    expect(all).toHaveLength(12);
    expect(new Set(all.map((r) => r.idempotency_key)).size).toBe(12);
    const mine = (await rerunJobs()).filter((j) => j.data.rerun?.batch === started.batch);
    expect(mine.map((j) => j.data.key).sort()).toEqual([...keys].sort());
    for (const j of mine) {
      expect(j.data.rerun).toEqual({
        id: expect.stringMatching(new RegExp(`^${started.batch}\\.\\d$`)) as string,
        of: `d/${j.data.key}/rerun-note`,
        batch: started.batch,
      });
      expect(j.data.event.name).toBe('message.received');
    }
    expect((await listReruns(deps)).map((s) => s.batch)).toContain(started.batch);
  });

  it('feeding a batch again, or from two processes at once, adds no run twice', async () => {
    await p.handlerQueues.low.pause();
    try {
      const started = await startRerun(deps, { handler: 'rerun-note' });
      const ctx = {
        redis: p.redis,
        prefix: p.prefix,
        queue: p.handlerQueues.low,
        handlers: () => deps.handlers,
        bodies: eventsJobBodies(p.redis, p.prefix),
        window: 4,
      };
      await Promise.all([feedBatch(ctx, started.batch), feedBatch(ctx, started.batch), feedBatch(ctx, started.batch)]);
      await feedBatch(ctx, started.batch);
      const mine = (await rerunJobs()).filter((j) => j.data.rerun?.batch === started.batch);
      const ids = mine.map((j) => j.data.rerun?.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(mine.length).toBeLessThanOrEqual(6);
      const s = await rerunStatus(deps, started.batch);
      expect(s.fed).toBe(mine.length);
      await cancelRerun(deps, started.batch);
    } finally {
      await p.handlerQueues.low.resume();
    }
  });

  it('cancel removes the runs not started, feeds no more, and says what ran', async () => {
    await p.handlerQueues.low.pause();
    let batch = '';
    let fedAtCancel: number | undefined;
    try {
      batch = (await startRerun(deps, { handler: 'rerun-note' })).batch;
      await waitFor(async () => (await rerunStatus(deps, batch)).fed > 0, 10_000, 50);
      const c = await cancelRerun(deps, batch);
      expect(c.before).toBe('running');
      expect(c.status.state).toBe('cancelled');
      expect(c.status.cancelled).toBe(c.status.fed);
      expect(c.status.done).toBe(0);
      fedAtCancel = c.status.fed;
      const left = (await rerunJobs()).filter((j) => j.data.rerun?.batch === batch);
      expect(left).toEqual([]);
      expect((await cancelRerun(deps, batch)).before).toBe('cancelled');
    } finally {
      await p.handlerQueues.low.resume();
    }
    // The worker's feeder looks at the batch every 250 ms: it feeds a cancelled batch no more.
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await rerunStatus(deps, batch)).fed).toBe(fedAtCancel);
  });
});
