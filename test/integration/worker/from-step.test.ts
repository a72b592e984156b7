import { fileURLToPath } from 'node:url';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliveryId, messageBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { rerunJobId, type HandlerJobData, type RerunRef } from '../../../src/queue/jobs.js';
import { originalSteps } from '../../../src/worker/steps.js';

/**
 * `switchyard rerun --from-step NAME` as the worker runs it (issue 34): the steps the original run completed
 * before NAME return what they returned then, NAME and what follows run fresh; a step the original never
 * completed, or results that are gone, fail the re-run for good before anything runs.
 */

const RERUN = fileURLToPath(new URL('../../support/handlers/rerun', import.meta.url));
const DAY = 86_400_000;

type G = { __syRerunLookups?: number; __syRerunDraft?: string; __syRerunFailOnce?: boolean };
const g = globalThis as G;

async function finished(p: Pipeline, jobId: string): Promise<Job<HandlerJobData>> {
  return waitFor(async () => {
    const job = await p.handlers.getJob(jobId);
    return job && (job.finishedOn !== undefined ? job : undefined);
  }, 20_000);
}

async function rerun(p: Pipeline, original: Job<HandlerJobData>, ref: Omit<RerunRef, 'of'>): Promise<Job<HandlerJobData>> {
  const data: HandlerJobData = { ...original.data, rerun: { ...ref, of: original.id as string } };
  const jobId = rerunJobId(data.key, data.handlerId, ref.id);
  await p.handlers.add(data.handlerId, data, { jobId, attempts: 3, backoff: { type: 'fixed', delay: 50 } });
  return finished(p, jobId);
}

describe('a re-run from a step', () => {
  let p: Pipeline;
  let conv: number;
  beforeAll(async () => {
    // A history kept longer than the dedupe window: step results must stay readable as long as it.
    p = await startPipeline({ handlersDir: RERUN, env: { HISTORY_TTL: '20d' } });
    conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
  });
  afterAll(async () => {
    await p?.close();
  });
  beforeEach(() => {
    for (const k of Object.keys(g)) if (k.startsWith('__syRerun')) delete g[k as keyof G];
  });

  const notes = async () =>
    (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).filter((r) => r.status < 300 && !r.replay);

  async function original(text: string): Promise<Job<HandlerJobData>> {
    const body = messageBody('message.received', conv, text);
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const job = await finished(p, jobIdFor(deliveryId(body), 'stepper'));
    expect(await job.getState()).toBe('completed');
    return job;
  }

  it('keeps the order of the steps and their results as long as the history; re-runs from one with the ones before it as they were', async () => {
    const job = await original('from-step');
    const steps = await originalSteps(p.redis, p.prefix, job.id as string);
    expect(steps.map((s) => [s.name, s.kept])).toEqual([
      ['lookup', true],
      ['draft', true],
      ['finish', true],
    ]);
    expect(steps.every((s, i) => i === 0 || s.completedAt >= (steps[i - 1]?.completedAt ?? 0))).toBe(true);
    // Each result lives past HISTORY_TTL (20 days here, longer than the 7-day default of the dedupe window).
    const ttl = await p.redis.pttl(`${p.prefix}:step:${job.id as string}:draft`);
    expect(ttl).toBeGreaterThan(20 * DAY);

    const before = (await notes()).length;
    g.__syRerunDraft = 'the fixed draft';
    g.__syRerunFailOnce = true;
    const re = await rerun(p, job, { id: 'fs1', fromStep: 'draft' });
    expect(await re.getState()).toBe('completed');
    expect(re.attemptsMade).toBe(2);
    // `lookup` came from the original run (its code did not run again); `draft` and what follows ran fresh, once
    // (the retry took them from the re-run's own store).
    expect(g.__syRerunLookups).toBe(1);
    const written = (await notes()).slice(before);
    expect(written.map((r) => r.body)).toEqual([{ body: 'the fixed draft' }]);
    const own = await originalSteps(p.redis, p.prefix, re.id as string);
    expect(own.map((s) => s.name)).toEqual(['draft', 'finish']);
    // The original run's results are untouched.
    expect(await p.redis.get(`${p.prefix}:step:${job.id as string}:draft`)).toBe(JSON.stringify({ v: 'draft from-step' }));
  });

  it('fails for good, running nothing, when the original never completed the step or a result before it is gone', async () => {
    const job = await original('never');
    const before = (await notes()).length;
    const never = await rerun(p, job, { id: 'fs-never', fromStep: 'publish' });
    expect([await never.getState(), never.attemptsMade]).toEqual(['failed', 1]);
    expect(never.failedReason).toContain('the original run never completed step "publish"');
    expect(never.failedReason).toContain('"lookup", "draft", "finish"');

    await p.redis.del(`${p.prefix}:step:${job.id as string}:lookup`);
    const gone = await rerun(p, job, { id: 'fs-gone', fromStep: 'finish' });
    expect([await gone.getState(), gone.attemptsMade]).toEqual(['failed', 1]);
    expect(gone.failedReason).toContain('the results of "lookup" from the original run are gone');

    expect((await notes()).length).toBe(before);
    expect(g.__syRerunLookups).toBe(1);
  });
});
