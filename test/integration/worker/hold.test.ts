/**
 * The due-time hold of durable runs (src/worker/hold.ts), through the whole
 * pipeline in this process (receiver, fan-out, BullMQ workers, sandbox) with
 * the ingest pump under the test's control (INGEST_PUMP=off; the test starts
 * and stops its own IngestPump): a delivery the receiver accepted (202) while a
 * run slept or waited, still in the inbox when the run's due time comes, holds
 * the run; once it is fanned out it answers the wait or cancels the run, and
 * once it is dead-lettered the run decides (timed out) without it.
 */
import { fileURLToPath } from 'node:url';
import { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId, eventBody, messageBody } from '../../support/events.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, memoryLogger, waitFor } from '../../support/service.js';
import { testRedisUrl } from '../../support/redis.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { IngestPump } from '../../../src/queue/pump.js';
import { ingestKeys } from '../../../src/queue/names.js';
import { RunRecords, type ParkedRun } from '../../../src/queue/waits/runs.js';
import { readTrace } from '../../../src/history/read.js';
import { formatTrace } from '../../../src/history/timeline.js';

const HOLD = fileURLToPath(new URL('../../support/handlers/workflow-hold', import.meta.url));

type Entry = Record<string, unknown> & { h: string };
const g = globalThis as { __syWf?: Entry[] };
const runs = (h: string, conv: number) => (g.__syWf ?? []).filter((e) => e.h === h && e['conv'] === conv);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('durable runs due while a delivery received before their due time is not fanned out yet', () => {
  let p: Pipeline;
  let pump: IngestPump | undefined;

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HOLD, env: { INGEST_PUMP: 'off', WORKER_CONCURRENCY: '4', HISTORY: 'on' } });
  });
  afterAll(async () => p?.close());
  beforeEach(() => {
    g.__syWf = [];
  });
  afterEach(async () => {
    await pump?.stop();
    pump = undefined;
  });

  /** Starts the ingest pump (the inbox moves to `events` from now on). */
  function startPump(): void {
    pump = new IngestPump({ redis: p.redis, blocking: new Redis(testRedisUrl(), { maxRetriesPerRequest: null }), events: p.events, prefix: p.prefix, log: memoryLogger().log, heartbeatMs: 1_000 });
    pump.start();
  }

  async function stopPump(): Promise<void> {
    await pump?.stop();
    pump = undefined;
  }

  async function send(body: string): Promise<string> {
    const r = await deliver(p.receiverUrl, body);
    expect(r.status).toBe(202);
    return deliveryId(body);
  }

  /** Starts a run and waits until it is parked; then stops the pump: what is accepted next stays in the inbox. */
  async function parkedRun(body: string, handler: string): Promise<{ id: string; parked: ParkedRun }> {
    startPump();
    const id = await send(body);
    const parked = await waitFor(async () => (await new RunRecords(p.redis, p.prefix).parked()).find((r) => r.deliveryKey === id && r.handler === handler));
    await stopPump();
    return { id, parked };
  }

  /** Past the run's due time: the run is held (still parked and listed, its job delayed, a hold line logged), not decided. */
  async function expectHeld(run: { id: string; parked: ParkedRun }, handler: string, pending: string, conv: number): Promise<void> {
    await sleep(Math.max(0, run.parked.dueAt + 1_500 - Date.now()));
    expect(runs(handler, conv)).toEqual([]);
    expect(await p.redis.lrange(ingestKeys(p.prefix).inbox, 0, -1)).toEqual([expect.stringContaining(pending)]);
    expect(await p.redis.zscore(ingestKeys(p.prefix).pendingFanOut, pending)).not.toBeNull();
    expect((await new RunRecords(p.redis, p.prefix).parked()).map((r) => r.deliveryKey)).toContain(run.id);
    const job = await Job.fromId(p.handlers, jobIdFor(run.id, handler));
    expect(await job?.getState()).toMatch(/delayed|active|waiting/);
    expect(p.lines.some((l) => l.includes('run held at its due time') && l.includes(run.id) && l.includes(pending))).toBe(true);
  }

  /** A run parked; `body` accepted before its due time and left in the inbox; the run held past its due time; then the pump starts. */
  async function heldFor(trigger: string, handler: string, body: string, conv: number): Promise<{ run: { id: string; parked: ParkedRun }; pending: string }> {
    const run = await parkedRun(trigger, handler);
    const pending = await send(body);
    expect(Date.now()).toBeLessThan(run.parked.dueAt);
    await expectHeld(run, handler, pending, conv);
    startPump();
    return { run, pending };
  }

  it('waitForEvent: a reply accepted before the timeout and still in the inbox at the due time is what the wait returns, not null', async () => {
    const c = 81_001;
    const { run, pending: reply } = await heldFor(conversationBody('conversation.closed', c, 'x'), 'hold-waiter', messageBody('message.received', c, 'the reply'), c);
    await waitFor(() => runs('hold-waiter', c).length === 1, 10_000);
    expect(runs('hold-waiter', c)[0]?.['got']).toBe('the reply');
    // The trace shows the hold, then the match.
    const text = await waitFor(async () => {
      const t = await readTrace(p.redis, p.prefix, run.id);
      const f = t ? formatTrace(t) : '';
      return f.includes('matched by') ? f : undefined;
    });
    expect(text).toContain(`held: ${reply}, received before it, is not fanned out yet`);
    expect(text).toContain(`wait reply for message.received: matched by ${reply}`);
    await waitFor(async () => (await new RunRecords(p.redis, p.prefix).parked()).every((r) => r.deliveryKey !== run.id));
  }, 20_000);

  it('cancelOn: a cancelling message accepted before the sleep is due and still in the inbox at the due time cancels the run', async () => {
    const c = 81_002;
    const { run, pending: stop } = await heldFor(conversationBody('conversation.assigned', c, 'x'), 'hold-cancel', messageBody('message.received', c, 'stop'), c);
    const done = await waitFor(async () => {
      const j = await Job.fromId(p.handlers, jobIdFor(run.id, 'hold-cancel'));
      return (await j?.isCompleted()) ? j : undefined;
    }, 10_000);
    expect((done?.returnvalue as { cancelled?: string }).cancelled).toBe(stop);
    await sleep(300);
    expect(runs('hold-cancel', c)).toEqual([]);
  }, 20_000);

  it('a pending delivery that is dead-lettered releases the hold: the wait times out with null at once, long before the cap', async () => {
    const c = 81_003;
    // Accepted (a signed delivery is never refused for its content), dead-lettered at fan-out: no such event.
    const { pending: bad } = await heldFor(conversationBody('conversation.closed', c, 'x'), 'hold-waiter', eventBody('no.such.event', { id: 1 }), c);
    const released = Date.now();
    await waitFor(() => runs('hold-waiter', c).length === 1, 10_000);
    expect(runs('hold-waiter', c)[0]?.['got']).toBeNull();
    expect(Date.now() - released).toBeLessThan(5_000);
    expect(await p.events.getFailedCount()).toBeGreaterThanOrEqual(1);
    expect(await p.redis.zscore(ingestKeys(p.prefix).pendingFanOut, bad)).toBeNull();
  }, 20_000);
});
