/**
 * A run an operator cancelled while it was parked, whose job a worker takes
 * before the job is removed (a worker that woke it in between, or a CLI that
 * died after the cancel's first step): the worker ends it cancelled before any
 * step (src/worker/hold.ts reads the record's mark), its job completes, and its
 * history says who cancelled it.
 */
import { fileURLToPath } from 'node:url';
import { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId } from '../../support/events.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';
import type { OpsEntry } from '../../support/handlers/waits-ops/tally.js';
import { CANCEL_ON_IDS, wakeParkedRun } from '../../../src/queue/waits/ops.js';
import { parkedKey, RunRecords, runKey, type ParkedRun } from '../../../src/queue/waits/runs.js';
import { WAIT_SCRIPTS } from '../../../src/queue/waits/wait-store.js';
import { waitIdsOf } from '../../../src/queue/waits/reached.js';
import { readTrace } from '../../../src/history/read.js';
import { formatTrace } from '../../../src/history/timeline.js';
import { jobIdFor } from '../../../src/events/envelope.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/waits-ops', import.meta.url));
const g = globalThis as { __syOps?: Map<string, OpsEntry> };

describe('a cancelled parked run taken by a worker before its job was removed', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
  });
  afterAll(async () => p?.close());

  it('ends cancelled before any step, its job completed, its history naming who cancelled it', async () => {
    const body = conversationBody('conversation.opened', 4_242, null);
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const key = deliveryId(body);
    const scope = jobIdFor(key, 'ops-sleeper');
    const records = new RunRecords(p.redis, p.prefix);
    await waitFor(async () => (await records.one(scope)) !== null, 20_000, 20);
    const run = (await records.one(scope)) as ParkedRun;
    // No worker takes the job for now (its queue paused): woken (its sleep due now, its job promoted), it waits.
    await p.handlers.pause();
    expect(
      (await wakeParkedRun({ redis: p.redis, prefix: p.prefix, queues: p.handlerQueues }, run, { who: 'bob', via: 'cli' })).status,
    ).toBe('woken');
    expect(await p.handlers.getJobState(run.jobId)).toMatch(/^(waiting|paused)$/);
    // The cancel's first step alone (src/queue/waits/lua/runCancel-5.lua), its job not removed.
    const fields = await records.load(scope);
    const lock = `${p.handlerQueues.normal.toKey(run.jobId)}:lock`;
    const step = await WAIT_SCRIPTS.on(p.redis).runCancel(
      [runKey(p.prefix, scope), `${p.prefix}:wait:state`, `${p.prefix}:wait:wake`, parkedKey(p.prefix), lock],
      [fields.get('p') ?? '', 'alice (cli)', `${p.prefix}:wait:on:`, scope, CANCEL_ON_IDS, ...waitIdsOf(scope, fields)],
    );
    expect(step).toBe('cancelled');
    await p.handlers.resume();
    await waitFor(async () => (await p.handlers.getJobState(run.jobId)) === 'completed', 20_000, 20);
    expect(g.__syOps?.get(key)?.after ?? 0).toBe(0);
    expect((await Job.fromId(p.handlers, run.jobId))?.returnvalue).toMatchObject({ cancelled: 'alice (cli)' });
    await waitFor(async () => (await readTrace(p.redis, p.prefix, key))?.handlers['ops-sleeper'] === 'cancelled', 10_000, 20);
    expect(formatTrace((await readTrace(p.redis, p.prefix, key))!)).toMatch(/cancelled by alice \(cli\): no further step ran/);
    expect(await records.one(scope)).toBeNull();
  });
});
