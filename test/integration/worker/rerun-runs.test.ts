import { fileURLToPath } from 'node:url';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId, lifecycleBody, messageBody } from '../../support/events.js';
import { handlerJobs, sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { OrderGate, orderKeys } from '../../../src/queue/order.js';
import { rerunJobId, type HandlerJobData, type RerunRef } from '../../../src/queue/jobs.js';
import { RunRecords } from '../../../src/queue/waits/runs.js';

/**
 * Re-runs (`switchyard rerun`, issue 34) as the worker runs them: handler jobs whose data carries `rerun`, added
 * here as the rerun engine adds them, on a real Redis with the sandbox API.
 */

const RERUN = fileURLToPath(new URL('../../support/handlers/rerun', import.meta.url));

type G = {
  __syRerunLookups?: number;
  __syRerunDraft?: string;
  __syRerunFailOnce?: boolean;
  __syRerunRuns?: { key: string; attempt: number; text: string }[];
  __syRerunGate?: Promise<void>;
  __syRerunLine?: { subject: string | null; at: string }[];
  __syRerunBursts?: { stage: string; count: number | null }[];
};
const g = globalThis as G;

async function send(p: Pipeline, body: string): Promise<string> {
  const r = await deliver(p.receiverUrl, body);
  expect(r.status).toBe(202);
  return deliveryId(body);
}

/** The finished job of a delivery's run (completed or failed). */
async function finished(p: Pipeline, jobId: string): Promise<Job<HandlerJobData>> {
  return waitFor(async () => {
    const job = await p.handlers.getJob(jobId);
    return job && (job.finishedOn !== undefined ? job : undefined);
  }, 20_000);
}

/** A completed run that ran its handler (not skipped): `{ ms }`. */
const RAN: unknown = { ms: expect.any(Number) as unknown };

/** Adds a re-run of `original` as the rerun engine does: the original's data with `rerun`, job id {@link rerunJobId}. */
async function rerun(p: Pipeline, original: Job<HandlerJobData>, ref: Omit<RerunRef, 'of'>): Promise<string> {
  const data: HandlerJobData = { ...original.data, rerun: { ...ref, of: original.id as string } };
  const jobId = rerunJobId(data.key, data.handlerId, ref.id);
  await p.handlers.add(data.handlerId, data, { jobId, attempts: 3, backoff: { type: 'fixed', delay: 50 } });
  return jobId;
}

describe('a re-run is a new run of a delivery, not a retry', () => {
  let p: Pipeline;
  let conv: number;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: RERUN });
    conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
  });
  afterAll(async () => {
    await p?.close();
  });
  beforeEach(() => {
    for (const k of Object.keys(g)) if (k.startsWith('__syRerun')) delete g[k as keyof G];
  });

  it('writes again with new Idempotency-Keys and runs its steps again; a retry of the re-run repeats its own keys', async () => {
    const key = await send(p, messageBody('message.received', conv, 'first'));
    const original = await finished(p, jobIdFor(key, 'stepper'));
    expect(original.returnvalue).toEqual(RAN);
    const notes = async () => (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).filter((r) => r.status < 300);
    const [first] = await notes();
    expect(first?.replay).toBe(false);

    // The fixed code writes another text: the re-run runs every step again (nothing taken from the original).
    g.__syRerunDraft = 'fixed text';
    const r1 = await rerun(p, original, { id: 'r1', batch: 'b1' });
    await finished(p, r1);
    expect(g.__syRerunLookups).toBe(2);
    const afterR1 = await notes();
    expect(afterR1).toHaveLength(2);
    const second = afterR1[1];
    expect(second?.idempotency_key).not.toBe(first?.idempotency_key);
    expect(second?.replay).toBe(false);
    expect((second?.body as { body: string }).body).toBe('fixed text');

    // Another re-run (id r2) fails once after its note: its retry sends r2's key again (a replay) and takes its
    // steps from r2's store; the note is written once more in all, not twice.
    g.__syRerunFailOnce = true;
    const r2 = await rerun(p, original, { id: 'r2', batch: 'b1' });
    const job2 = await finished(p, r2);
    expect(job2.attemptsMade).toBe(2);
    expect(g.__syRerunLookups).toBe(3);
    const afterR2 = await notes();
    expect(afterR2.map((r) => r.replay)).toEqual([false, false, false, true]);
    expect(afterR2[2]?.idempotency_key).toBe(afterR2[3]?.idempotency_key);
    expect(new Set(afterR2.map((r) => r.idempotency_key)).size).toBe(3);

    // A re-run killed mid-way and added again (same rerun id, its job gone) doubles nothing: its keys and steps are r2's.
    await job2.remove();
    g.__syRerunDraft = 'changed again';
    await finished(p, await rerun(p, original, { id: 'r2', batch: 'b1' }));
    expect(g.__syRerunLookups).toBe(3);
    const afterAgain = await notes();
    expect(afterAgain).toHaveLength(5);
    expect(afterAgain[4]).toMatchObject({ idempotency_key: afterR2[2]?.idempotency_key, replay: true });
    expect(afterAgain.at(-1)?.body).toEqual({ body: 'fixed text' });
  });

  it('runs an event past maxAge and one skipped as stale: those checks protect live deliveries, not deliberate re-runs', async () => {
    const old = await send(p, conversationBody('conversation.opened', 5_201, 'old', Date.now() - 2 * 3_600_000));
    const skippedOld = await finished(p, jobIdFor(old, 'in-line'));
    expect(skippedOld.returnvalue).toEqual({ ms: 0, skipped: 'max_age' });
    const base = Date.now();
    await send(p, conversationBody('conversation.assigned', 5_202, 'newer', base));
    await waitFor(() => g.__syRerunLine?.some((e) => e.subject === 'newer' && e.at === 'done'));
    const stale = await send(p, conversationBody('conversation.assigned', 5_202, 'older', base - 5_000));
    const skippedStale = await finished(p, jobIdFor(stale, 'in-line'));
    expect(skippedStale.returnvalue).toEqual({ ms: 0, skipped: 'stale' });

    const a = await finished(p, await rerun(p, skippedOld, { id: 'age' }));
    const b = await finished(p, await rerun(p, skippedStale, { id: 'stale' }));
    expect([a.returnvalue, b.returnvalue]).toEqual([RAN, RAN]);
    expect(g.__syRerunLine?.filter((e) => e.at === 'done').map((e) => e.subject)).toEqual(['newer', 'old', 'older']);
  });

  it("does not join its key's order line: it neither waits behind a live run of its key nor holds later live runs up", async () => {
    const line = 5_301;
    const base = Date.now();
    const done = await send(p, conversationBody('conversation.assigned', line, 'done', base - 10_000));
    const original = await finished(p, jobIdFor(done, 'in-line'));
    // A live run of the same conversation is busy (it waits on the gate), a later live event queues behind it.
    let open: () => void = () => undefined;
    g.__syRerunGate = new Promise<void>((r) => (open = r));
    await send(p, conversationBody('conversation.assigned', line, 'slow', base));
    await waitFor(() => g.__syRerunLine?.some((e) => e.subject === 'slow' && e.at === 'start'));
    const later = await send(p, conversationBody('conversation.assigned', line, 'later', base + 1_000));
    // The re-run of the completed delivery runs now (not already_completed, not parked behind the busy run).
    const reId = await rerun(p, original, { id: 'line' });
    const re = await finished(p, reId);
    expect(re.returnvalue).toEqual(RAN);
    expect(g.__syRerunLine?.filter((e) => e.at === 'done').map((e) => e.subject)).toEqual(['done', 'done']);
    open();
    await finished(p, jobIdFor(later, 'in-line'));
    expect(g.__syRerunLine?.filter((e) => e.at === 'done').map((e) => e.subject)).toEqual(['done', 'done', 'slow', 'later']);
    // The line is over, and the re-run left nothing in its bookkeeping (no marker of a run of the line).
    expect(await p.redis.exists(orderKeys(p.prefix, 'in-line', `conversation:${line}`).done(reId))).toBe(0);
    expect(await new OrderGate(p.redis, p.prefix, { doneTtlMs: 60_000 }).backlog('in-line')).toEqual({ keys: 0, pending: 0, longest: 0 });
  });

  it('a re-run of a parked run parks beside it with a record of its own, not in its place', async () => {
    const key = await send(p, conversationBody('conversation.closed', 5_501, 'nap'));
    const original = await waitFor(async () => {
      const job = await p.handlers.getJob(jobIdFor(key, 'napper'));
      return (await job?.isDelayed()) ? job : undefined;
    });
    const reId = await rerun(p, original, { id: 'nap' });
    await waitFor(async () => (await p.handlers.getJob(reId))?.isDelayed());
    const parked = (await new RunRecords(p.redis, p.prefix).parked()).filter((r) => r.name === 'nap');
    expect(parked.map((r) => [r.scope, r.jobId, r.handler, r.deliveryKey]).sort()).toEqual([
      [jobIdFor(key, 'napper'), jobIdFor(key, 'napper'), 'napper', key],
      [reId, reId, 'napper', key],
    ]);
  });

  it("does not take a live debounce burst: it runs its own delivery's event alone, and the live burst runs as before", async () => {
    const contact = 5_401;
    await send(p, lifecycleBody(contact, 'lead'));
    await waitFor(() => g.__syRerunBursts?.length === 1, 10_000);
    const [burstJob] = (await handlerJobs(p, ['completed'])).filter((j) => j.name === 'bursty');
    expect(burstJob?.data.debounce).toBeDefined();
    // A live burst of the same contact is open while the re-run runs.
    await send(p, lifecycleBody(contact, 'customer'));
    await send(p, lifecycleBody(contact, 'churned'));
    const re = await finished(p, await rerun(p, burstJob as Job<HandlerJobData>, { id: 'burst' }));
    expect(re.returnvalue).toEqual(RAN);
    await waitFor(() => g.__syRerunBursts?.length === 3, 10_000);
    expect(g.__syRerunBursts).toEqual([
      { stage: 'lead', count: 1 },
      { stage: 'lead', count: null },
      { stage: 'churned', count: 2 },
    ]);
  });
});
