/**
 * Operating parked runs (src/queue/waits/ops.ts) on a real pipeline: a cancel
 * leaves no job, wait, due entry or cancelOn registration behind and no
 * further step runs, also when the event the run waited for comes after; a
 * woken sleep goes on once, a woken wait returns null once; a cancelled
 * ordered run hands its key to the next; each is recorded in the delivery's
 * history with who did it; runs of handlers no longer loaded are listed.
 */
import { fileURLToPath } from 'node:url';
import { Job } from 'bullmq';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId, lifecycleBody, messageBody } from '../../../support/events.js';
import { startPipeline, type Pipeline } from '../../../support/pipeline.js';
import { deliver, waitFor } from '../../../support/service.js';
import type { OpsEntry } from '../../../support/handlers/waits-ops/tally.js';
import {
  cancelParkedRuns,
  orphanedRuns,
  resolveParkedRun,
  wakeParkedRun,
  type ParkedRunDeps,
  type RunActor,
} from '../../../../src/queue/waits/ops.js';
import { RunRecords, type ParkedRun } from '../../../../src/queue/waits/runs.js';
import { runNoteWriter } from '../../../../src/history/operator.js';
import { readTrace } from '../../../../src/history/read.js';
import { formatTrace } from '../../../../src/history/timeline.js';
import { jobIdFor } from '../../../../src/events/envelope.js';

const HANDLERS = fileURLToPath(new URL('../../../support/handlers/waits-ops', import.meta.url));
const g = globalThis as { __syOps?: Map<string, OpsEntry> };
const tally = (key: string): OpsEntry => g.__syOps?.get(key) ?? { after: 0, got: [] };
const ALICE: RunActor = { who: 'alice', via: 'cli', reason: 'bad deploy 1.4.2' };

describe('parked runs operated: cancel, wake, orphaned', () => {
  let p: Pipeline;
  let deps: ParkedRunDeps;
  let conv = 8100;
  const records = () => new RunRecords(p.redis, p.prefix);
  const parkedOf = async (key: string, handler: string): Promise<ParkedRun> => {
    await waitFor(async () => (await records().one(jobIdFor(key, handler))) !== null, 20_000, 20);
    return (await records().one(jobIdFor(key, handler))) as ParkedRun;
  };
  const send = async (body: string): Promise<string> => {
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    return deliveryId(body);
  };
  /** Waits until the delivery was fanned out (its history has the fan-out entry). */
  const fannedOut = (key: string) =>
    waitFor(async () => (await readTrace(p.redis, p.prefix, key))?.entries.some((e) => e.kind === 'fanout') === true, 10_000, 20);
  /** Everything Switchyard keeps in Redis for a run's waits: wait states, their registrations, wake-ups, the due entry. */
  const leftovers = async (run: ParkedRun): Promise<string[]> => {
    const out: string[] = [];
    const states = await p.redis.hkeys(`${p.prefix}:wait:state`);
    out.push(...states.filter((id) => id.startsWith(`${run.scope}:`)).map((id) => `state ${id}`));
    for (const key of await p.redis.keys(`${p.prefix}:wait:on:*`)) {
      for (const id of await p.redis.hkeys(key)) if (id.startsWith(`${run.scope}:`)) out.push(`${key} ${id}`);
    }
    const wake = await p.redis.zrange(`${p.prefix}:wait:wake`, '0', '-1');
    out.push(...wake.filter((id) => id.startsWith(`${run.scope}:`)).map((id) => `wake ${id}`));
    if ((await p.redis.zscore(`${p.prefix}:wf:due`, run.scope)) !== null) out.push(`due ${run.scope}`);
    // A job that is not completed (a run that went on to its end completes it, and BullMQ keeps that an hour).
    const job = await Job.fromId(p.handlerQueues.normal, run.jobId);
    if (job && !(await job.isCompleted())) out.push(`job ${run.jobId} ${await job.getState()}`);
    return out;
  };

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
    deps = { redis: p.redis, prefix: p.prefix, queues: p.handlerQueues, history: runNoteWriter(p.redis, p.prefix, 3_600_000) };
  });
  afterAll(async () => p?.close());
  beforeEach(() => {
    conv += 1;
  });

  it('a cancelled sleep leaves nothing behind, never goes on (not even when its due time is forced), and its history says who', async () => {
    const key = await send(conversationBody('conversation.opened', conv, null));
    const run = await parkedOf(key, 'ops-sleeper');
    // Its two cancelOn entries are registered while it sleeps.
    expect((await p.redis.hkeys(`${p.prefix}:wait:state`)).filter((id) => id.startsWith(`${run.scope}:c:`))).toHaveLength(2);
    const [r] = await cancelParkedRuns(deps, [run], ALICE);
    expect(r?.status).toBe('cancelled');
    expect(await leftovers(run)).toEqual([]);
    expect(await records().parked()).not.toContainEqual(expect.objectContaining({ scope: run.scope }));
    // The event it would have been cancelled by finds nothing to answer.
    await fannedOut(await send(conversationBody('conversation.closed', conv, null)));
    expect(tally(key).after).toBe(0);
    const trace = await readTrace(p.redis, p.prefix, key);
    expect(trace?.handlers['ops-sleeper']).toBe('cancelled');
    expect(formatTrace(trace!)).toMatch(/ops-sleeper {2}cancelled in sleep nap by alice \(cli\): bad deploy 1\.4\.2; no further step runs/);
  });

  it('a cancelled wait is not answered by the event it waited for', async () => {
    const key = await send(conversationBody('conversation.assigned', conv, null));
    const run = await parkedOf(key, 'ops-waiter');
    expect(run.kind).toBe('wait-for-event');
    expect((await cancelParkedRuns(deps, { handler: 'ops-waiter' }, ALICE)).map((r) => [r.run.scope, r.status])).toEqual([
      [run.scope, 'cancelled'],
    ]);
    expect(await leftovers(run)).toEqual([]);
    await fannedOut(await send(messageBody('message.received', conv, 'too late')));
    expect(tally(key)).toEqual({ after: 0, got: [] });
    // Cancelling it again finds nothing parked.
    expect((await cancelParkedRuns(deps, [run], ALICE))[0]?.status).toBe('finished');
  });

  it('a woken sleep goes on now, once; its history says who woke it', async () => {
    const key = await send(conversationBody('conversation.opened', conv, null));
    const run = await parkedOf(key, 'ops-sleeper');
    expect((await wakeParkedRun(deps, run.deliveryKey, { who: 'bob', via: 'admin' })).status).toBe('woken');
    await waitFor(async () => tally(key).after === 1, 20_000, 20);
    await waitFor(async () => (await readTrace(p.redis, p.prefix, key))?.handlers['ops-sleeper'] === 'completed', 10_000, 20);
    expect(await leftovers(run)).toEqual([]);
    expect(tally(key).after).toBe(1);
    const text = formatTrace((await readTrace(p.redis, p.prefix, key))!);
    expect(text).toMatch(/ops-sleeper {2}woken in sleep nap by bob \(admin\): it ends now/);
    // Waking it again: it is not parked any more.
    expect((await wakeParkedRun(deps, run, { who: 'bob', via: 'admin' })).status).toBe('finished');
  });

  it('a woken wait returns null at once, as if it timed out; its event coming after answers nothing', async () => {
    const key = await send(conversationBody('conversation.assigned', conv, null));
    const run = await parkedOf(key, 'ops-waiter');
    expect((await wakeParkedRun(deps, run.scope, ALICE)).status).toBe('timeout');
    await waitFor(async () => tally(key).after === 1, 20_000, 20);
    await fannedOut(await send(messageBody('message.received', conv, 'late reply')));
    await waitFor(async () => (await readTrace(p.redis, p.prefix, key))?.handlers['ops-waiter'] === 'completed', 10_000, 20);
    expect(tally(key)).toEqual({ after: 1, got: ['null'] });
    expect(await leftovers(run)).toEqual([]);
    expect(formatTrace((await readTrace(p.redis, p.prefix, key))!)).toMatch(
      /woken in wait reply by alice \(cli\): bad deploy 1\.4\.2: it returns null now, as if it timed out/,
    );
  });

  it('a cancelled ordered run gives its key to the next run of the same contact', async () => {
    const contact = conv;
    const first = await send(lifecycleBody(contact, 'Lead'));
    const run = await parkedOf(first, 'ops-ordered');
    const second = await send(lifecycleBody(contact, 'Customer'));
    // The second waits in line behind the parked first (it has not started).
    await waitFor(async () => (await readTrace(p.redis, p.prefix, second))?.handlers['ops-ordered'] !== undefined, 10_000, 20);
    expect(tally(second).got).toEqual([]);
    expect((await cancelParkedRuns(deps, [run], ALICE))[0]?.status).toBe('cancelled');
    const next = await parkedOf(second, 'ops-ordered');
    expect(tally(second).got).toEqual(['started']);
    expect(tally(first).after).toBe(0);
    await cancelParkedRuns(deps, [next], ALICE);
  });

  it('a reference is a delivery key or a job id; one naming no run or several says so', async () => {
    const key = await send(conversationBody('conversation.opened', conv, null));
    const run = await parkedOf(key, 'ops-sleeper');
    expect((await resolveParkedRun(deps, key)).map((r) => r.scope)).toEqual([run.scope]);
    expect((await resolveParkedRun(deps, run.jobId)).map((r) => r.scope)).toEqual([run.scope]);
    expect(await resolveParkedRun(deps, key, 'ops-waiter')).toEqual([]);
    await expect(wakeParkedRun(deps, 'no-such-delivery', ALICE)).rejects.toThrow(/no parked run is named "no-such-delivery"/);
    await cancelParkedRuns(deps, [run], ALICE);
  });

  it('runs parked for a handler that is not loaded are listed as orphaned', async () => {
    const key = await send(conversationBody('conversation.opened', conv, null));
    const run = await parkedOf(key, 'ops-sleeper');
    const orphans = await orphanedRuns(deps, ['ops-waiter', 'ops-ordered']);
    expect(orphans.map((r) => r.scope)).toContain(run.scope);
    expect(orphans.every((r) => r.handler === 'ops-sleeper')).toBe(true);
    expect(await orphanedRuns(deps, ['ops-sleeper', 'ops-waiter', 'ops-ordered'])).toEqual([]);
    await cancelParkedRuns(deps, { handler: 'ops-sleeper' }, ALICE);
    expect(await orphanedRuns(deps, [])).toEqual([]);
  });
});
