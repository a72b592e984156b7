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
import { jobIdFor } from '../../../src/events/envelope.js';
import { IngestPump } from '../../../src/queue/pump.js';
import { ingestKeys } from '../../../src/queue/names.js';
import { RunRecords, type ParkedRun } from '../../../src/queue/waits/runs.js';
import { readTrace } from '../../../src/history/read.js';
import { formatTrace } from '../../../src/history/timeline.js';
import { defineHandler } from '../../../src/handler/define.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { HandlerStateStore } from '../../../src/queue/state/state-store.js';
import { WaitStore } from '../../../src/queue/waits/wait-store.js';
import { createHandlerProcessor, type FlowPorts } from '../../../src/worker/processor.js';
import { MemoryStepStore } from '../../../src/worker/steps.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

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
    pump = new IngestPump({
      redis: p.redis,
      blocking: new Redis(testRedisUrl(), { maxRetriesPerRequest: null }),
      events: p.events,
      prefix: p.prefix,
      log: memoryLogger().log,
      heartbeatMs: 1_000,
    });
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
    const parked = await waitFor(async () =>
      (await new RunRecords(p.redis, p.prefix).parked()).find((r) => r.deliveryKey === id && r.handler === handler),
    );
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
  async function heldFor(
    trigger: string,
    handler: string,
    body: string,
    conv: number,
  ): Promise<{ run: { id: string; parked: ParkedRun }; pending: string }> {
    const run = await parkedRun(trigger, handler);
    const pending = await send(body);
    expect(Date.now()).toBeLessThan(run.parked.dueAt);
    await expectHeld(run, handler, pending, conv);
    startPump();
    return { run, pending };
  }

  it('waitForEvent: a reply accepted before the timeout and still in the inbox at the due time is what the wait returns, not null', async () => {
    const c = 81_001;
    const { run, pending: reply } = await heldFor(
      conversationBody('conversation.closed', c, 'x'),
      'hold-waiter',
      messageBody('message.received', c, 'the reply'),
      c,
    );
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
    const { run, pending: stop } = await heldFor(
      conversationBody('conversation.assigned', c, 'x'),
      'hold-cancel',
      messageBody('message.received', c, 'stop'),
      c,
    );
    const done = await waitFor(async () => {
      const j = await Job.fromId(p.handlers, jobIdFor(run.id, 'hold-cancel'));
      // Read again once completed: a job read just before it completed has no return value yet.
      return (await j?.isCompleted()) ? Job.fromId(p.handlers, jobIdFor(run.id, 'hold-cancel')) : undefined;
    }, 10_000);
    expect((done?.returnvalue as { cancelled?: string }).cancelled).toBe(stop);
    await sleep(300);
    expect(runs('hold-cancel', c)).toEqual([]);
  }, 20_000);

  it('a pending delivery that is dead-lettered releases the hold: the wait times out with null at once, long before the cap', async () => {
    const c = 81_003;
    // Accepted (a signed delivery is never refused for its content), dead-lettered at fan-out: no such event.
    const { pending: bad } = await heldFor(
      conversationBody('conversation.closed', c, 'x'),
      'hold-waiter',
      eventBody('no.such.event', { id: 1 }),
      c,
    );
    const released = Date.now();
    await waitFor(() => runs('hold-waiter', c).length === 1, 10_000);
    expect(runs('hold-waiter', c)[0]?.['got']).toBeNull();
    expect(Date.now() - released).toBeLessThan(5_000);
    expect(await p.events.getFailedCount()).toBeGreaterThanOrEqual(1);
    expect(await p.redis.zscore(ingestKeys(p.prefix).pendingFanOut, bad)).toBeNull();
  }, 20_000);
});

describe("the hold's cap: a pending entry that never clears (a delivery lost after it was accepted)", () => {
  const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  afterAll(() => redis.disconnect());

  it('the processor holds the due run without running its handler, from its first hold on, and goes on at the cap with a warning naming the delivery', async () => {
    const prefix = uniquePrefix('holdcap');
    const records = new RunRecords(redis, prefix);
    const waits = new WaitStore(redis, prefix, 3_600_000);
    const T = Date.now();
    let clock = T;
    let ran = 0;
    const got: unknown[] = [];
    const h = defineHandler({
      id: 'cap',
      on: ['conversation.closed'],
      async handle(_event, ctx) {
        ran++;
        got.push(await ctx.waitForEvent('reply', { event: 'message.received', match: 'conversation', timeout: '1s' }));
      },
    });
    const { log, lines } = memoryLogger();
    // The set's oldest entry: received before the due time, and never fanned out.
    const flow = { oldestPending: async () => ({ key: 'evt_lost', at: T + 500 }) } as unknown as FlowPorts;
    const processJob = createHandlerProcessor({
      set: new HandlerSet(handlerSnapshot([h], undefined, {})),
      api: undefined,
      steps: new MemoryStepStore(),
      log,
      flow,
      now: () => clock,
      durable: { records, waits, state: new HandlerStateStore(redis, prefix), keepMs: 60_000, holdMaxMs: 5_000 },
    });
    const env = JSON.parse(conversationBody('conversation.closed', 5, 'x')) as { id: string; created_at: string; data: unknown };
    const data = {
      key: env.id,
      handlerId: 'cap',
      receivedAt: new Date(T).toISOString(),
      event: { id: env.id, name: 'conversation.closed', createdAt: env.created_at, data: env.data },
    } as HandlerJobData;
    const job = (parked: boolean) => ({
      id: `job-${env.id}`,
      data: parked ? { ...data, parked: true as const } : data,
      timestamp: T,
      attemptsMade: 0,
      attempts: 3,
    });

    expect(await processJob(job(false))).toMatchObject({ kind: 'wait', until: T + 1_000, wait: 'wait-for-event' });
    expect(ran).toBe(1);
    // Due: held (its handler does not run), parked again for 200 ms, still listed; the first hold is remembered.
    clock = T + 1_500;
    expect(await processJob(job(true))).toMatchObject({ kind: 'wait', until: clock + 200, name: 'reply' });
    expect(ran).toBe(1);
    const scope = (await records.parked())[0]?.scope as string;
    expect(scope).toBeDefined();
    expect((await records.load(scope)).get('h:reply')).toBe(String(T + 1_500));
    clock = T + 4_500;
    expect(await processJob(job(true))).toMatchObject({ kind: 'wait', until: clock + 1_500 });
    expect((await records.load(scope)).get('h:reply')).toBe(String(T + 1_500));
    expect(lines.filter((l) => l.includes('run held at its due time') && l.includes('evt_lost'))).toHaveLength(2);
    // Five seconds (the cap here) after the first hold: it goes on, times out, and says why.
    clock = T + 6_500;
    expect(await processJob(job(true))).toMatchObject({ kind: 'completed' });
    expect(got).toEqual([null]);
    const warning = lines
      .map((l) => JSON.parse(l) as { level: string; msg: string; pending?: string; heldMs?: number })
      .find((l) => l.msg.startsWith('run held past its due time for the longest allowed'));
    expect(warning).toMatchObject({ level: 'warn', pending: 'evt_lost', heldMs: 5_000 });
    expect(await records.parked()).toEqual([]);
  });
});
