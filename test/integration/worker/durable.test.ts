import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId, lifecycleBody, messageBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, memoryLogger, testConfig, waitFor } from '../../support/service.js';
import { testRedisUrl } from '../../support/redis.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { RunRecords } from '../../../src/queue/waits/runs.js';
import { retryDead } from '../../../src/queue/dlq.js';
import { HandlerStateStore } from '../../../src/queue/state/state-store.js';
import { startWorker, type WorkerService } from '../../../src/runtime/worker.js';
import { loadHandlerDir } from '../../../src/handler/loader.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import { openHandlerQueues } from '../../../src/queue/queues.js';
import { SANDBOX_TOKEN } from '../../support/pipeline.js';
import { readTrace } from '../../../src/history/read.js';
import { formatTrace } from '../../../src/history/timeline.js';

const WF = fileURLToPath(new URL('../../support/handlers/workflow', import.meta.url));

type Entry = Record<string, unknown> & { h: string };
const g = globalThis as { __syWf?: Entry[] };
const runs = (h: string, f: Record<string, unknown> = {}) =>
  (g.__syWf ?? []).filter((e) => e.h === h && Object.entries(f).every(([k, v]) => e[k] === v));

async function send(p: Pipeline, body: string): Promise<string> {
  const r = await deliver(p.receiverUrl, body);
  expect(r.status).toBe(202);
  return deliveryId(body);
}

describe('durable workflows: sleep, waitForEvent, cancelOn, state (signed deliveries in, real Redis and BullMQ workers)', () => {
  let p: Pipeline;
  let conv: number;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: WF, env: { WORKER_CONCURRENCY: '8', HISTORY: 'on' } });
    const r = await sandboxCall(p, 'GET', '/conversations');
    conv = (r.json.data as { id: number }[])[0]?.id as number;
  });
  afterAll(async () => p?.close());
  beforeEach(() => {
    g.__syWf = [];
  });

  it('a sleep parks the run and wakes it on time; the replay runs no step and no API write again', async () => {
    const started = Date.now();
    const id = await send(p, conversationBody('conversation.opened', conv, 's1'));
    await waitFor(() => runs('sleeper', { at: 'pre-sleep' }).length === 1);
    // Parked: delayed in BullMQ, listed among the parked runs, no slot held.
    const job = await waitFor(async () => {
      const j = await p.handlers.getJob(jobIdFor(id, 'wf-sleeper'));
      return j && (await j.isDelayed()) ? j : undefined;
    });
    expect(job.attemptsMade).toBe(0);
    const parked = await new RunRecords(p.redis, p.prefix).parked();
    expect(parked).toEqual([expect.objectContaining({ name: 'nap', handler: 'wf-sleeper', deliveryKey: id, kind: 'sleep' })]);
    await waitFor(() => runs('sleeper', { at: 'done' }).length === 1, 10_000);
    const woke = runs('sleeper', { at: 'done' })[0]?.['t'] as number;
    expect(woke - started).toBeGreaterThanOrEqual(1_500);
    expect(woke - started).toBeLessThan(1_500 + 2_500);
    // The step ran once; the replay went past the sleep once.
    expect(runs('sleeper', { at: 'step' })).toHaveLength(1);
    expect(runs('sleeper', { at: 'pre-sleep' })).toHaveLength(2);
    // The write before the sleep was sent once (its replay answered from the run's memory, no request at all).
    const notes = (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).filter((r) =>
      JSON.stringify(r.body).includes(id),
    );
    expect(notes.map((r) => (r.body as { body: string }).body).sort()).toEqual([`after ${id}`, `before ${id}`]);
    const done = await waitFor(async () => (await p.handlers.getJob(jobIdFor(id, 'wf-sleeper')))?.returnvalue as unknown);
    expect(typeof (done as { ms?: unknown }).ms).toBe('number');
    expect(await new RunRecords(p.redis, p.prefix).parked()).toEqual([]);
    expect(p.lines.some((l) => l.includes('"wait":"nap"') && l.includes('run parked'))).toBe(true);
    // The lifecycle reached the history: `switchyard trace` prints a line per sleep (begun, then over).
    const text = await waitFor(async () => {
      const t = await readTrace(p.redis, p.prefix, id);
      const f = t ? formatTrace(t) : '';
      return f.includes('sleep nap: over') ? f : undefined;
    });
    expect(text).toMatch(/wf-sleeper {2}attempt 1 {2}→ wait[\s\S]*sleep nap: parked until \d{4}-/);
    expect(text).toMatch(/wf-sleeper {2}attempt 1 {2}→ completed[\s\S]*sleep nap: over/);
  }, 20_000);

  it('waitForEvent is answered by a later delivery of the conversation, and the run resumes with it', async () => {
    const c = 70_001;
    const id = await send(p, conversationBody('conversation.closed', c, 'plain'));
    await waitFor(async () =>
      (await new RunRecords(p.redis, p.prefix).parked()).some((r) => r.name === 'reply' && r.key === `conversation:${c}`),
    );
    await send(p, messageBody('message.received', 70_999, 'other conversation'));
    const reply = await send(p, messageBody('message.received', c, 'the reply'));
    await waitFor(() => runs('waiter', { at: 'done', conv: c }).length === 1, 5_000);
    // Woken by the event, well before its 3 s timeout.
    expect(runs('waiter', { at: 'done', conv: c })[0]?.['got']).toBe('the reply');
    const text = await waitFor(async () => {
      const t = await readTrace(p.redis, p.prefix, id);
      const f = t ? formatTrace(t) : '';
      return f.includes('matched by') ? f : undefined;
    });
    expect(text).toContain(`wait reply for message.received: matched by ${reply}`);
  });

  it('waitForEvent with a key function: events of other keys are passed over, the matching one answers it', async () => {
    const c = 70_010;
    const id = await send(p, conversationBody('conversation.closed', c, 'fn'));
    await waitFor(async () => (await new RunRecords(p.redis, p.prefix).parked()).some((r) => r.name === 'reply' && r.key === String(c)));
    await send(p, messageBody('message.received', c + 500, 'not this one'));
    await new Promise((r) => setTimeout(r, 400));
    expect(runs('waiter', { at: 'done', conv: c })).toHaveLength(0);
    await send(p, messageBody('message.received', c, 'the fn reply'));
    await waitFor(() => runs('waiter', { at: 'done', conv: c }).length === 1, 5_000);
    expect(runs('waiter', { at: 'done', conv: c })[0]?.['got']).toBe('the fn reply');
    // Its waits (one per candidate it passed over) are forgotten once it completed.
    await waitFor(async () => (await p.handlers.getJob(jobIdFor(id, 'wf-waiter')))?.isCompleted());
    expect((await p.redis.hkeys(`${p.prefix}:wait:state`)).filter((k) => k.startsWith(jobIdFor(id, 'wf-waiter')))).toEqual([]);
  });

  it('looks back: a reply received while the run was busy (before it began to wait) answers the wait at once; lookback false does not see it', async () => {
    const c = 70_002;
    const d = 70_003;
    await send(p, conversationBody('conversation.closed', c, 'linger'));
    await send(p, conversationBody('conversation.closed', d, 'nolook'));
    await waitFor(() => runs('waiter', { at: 'start', conv: c }).length === 1 && runs('waiter', { at: 'start', conv: d }).length === 1);
    await send(p, messageBody('message.received', c, 'early reply'));
    await send(p, messageBody('message.received', d, 'early reply'));
    await waitFor(() => runs('waiter', { at: 'done', conv: c }).length === 1, 5_000);
    expect(runs('waiter', { at: 'done', conv: c })[0]?.['got']).toBe('early reply');
    // Never parked: one start.
    expect(runs('waiter', { at: 'start', conv: c })).toHaveLength(1);
    // Without lookback the early reply does not count: it times out.
    await waitFor(() => runs('waiter', { at: 'done', conv: d }).length === 1, 8_000);
    expect(runs('waiter', { at: 'done', conv: d })[0]?.['got']).toBeNull();
  }, 15_000);

  it('a wait nobody answers times out with null', async () => {
    const c = 70_004;
    const started = Date.now();
    await send(p, conversationBody('conversation.closed', c, 'plain'));
    await waitFor(() => runs('waiter', { at: 'done', conv: c }).length === 1, 8_000);
    expect(runs('waiter', { at: 'done', conv: c })[0]?.['got']).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
  }, 12_000);

  it('cancelOn: an inbound message cancels the sleeping run: completed as cancelled, no further step, not dead', async () => {
    const c = 70_005;
    const id = await send(p, conversationBody('conversation.assigned', c, 'x'));
    await waitFor(async () => (await p.handlers.getJob(jobIdFor(id, 'wf-cancel')))?.isDelayed());
    const reply = await send(p, messageBody('message.received', c, 'stop'));
    const result = await waitFor(
      async () => (await p.handlers.getJob(jobIdFor(id, 'wf-cancel')))?.returnvalue as { cancelled?: string } | undefined,
      5_000,
    );
    expect(result).toEqual({ ms: 0, cancelled: reply });
    expect(runs('cancel', { at: 'after' })).toHaveLength(0);
    expect(runs('cancel', { at: 'first', conv: c })).toHaveLength(1);
    expect(await p.handlers.getJobCounts('failed')).toMatchObject({ failed: 0 });
    const text = await waitFor(async () => {
      const t = await readTrace(p.redis, p.prefix, id);
      const f = t ? formatTrace(t) : '';
      return f.includes('cancelled by') ? f : undefined;
    });
    expect(text).toContain(`→ cancelled`);
    expect(text).toContain(`cancelled by ${reply} (message.received, cancelOn)`);
  });

  it('cancelOn with a key function: an event of another key does not cancel, one of the same key does', async () => {
    const c = 70_011;
    const id = await send(p, conversationBody('conversation.assigned', c, 'fn'));
    await waitFor(async () => (await p.handlers.getJob(jobIdFor(id, 'wf-cancel-fn')))?.isDelayed());
    await send(p, messageBody('message.received', c + 500, 'elsewhere'));
    await new Promise((r) => setTimeout(r, 400));
    expect(await (await p.handlers.getJob(jobIdFor(id, 'wf-cancel-fn')))?.isDelayed()).toBe(true);
    const reply = await send(p, messageBody('message.received', c, 'stop'));
    const result = await waitFor(
      async () => (await p.handlers.getJob(jobIdFor(id, 'wf-cancel-fn')))?.returnvalue as { cancelled?: string } | undefined,
      5_000,
    );
    expect(result).toEqual({ ms: 0, cancelled: reply });
  });

  it('ctx.state: concurrent runs of one contact each count once, even though each run is replayed after its nap', async () => {
    const contact = 880_000 + Math.floor(Math.random() * 1000);
    for (let i = 0; i < 20; i++) await send(p, lifecycleBody(contact, `s${i}`));
    await waitFor(() => runs('counter', { contact }).length === 20, 20_000);
    const state = await new HandlerStateStore(p.redis, p.prefix).get('wf-counter', `contact:${contact}`);
    expect(state).toBe(20);
    expect(
      runs('counter', { contact })
        .map((e) => e['n'])
        .sort((a, b) => Number(a) - Number(b)),
    ).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  }, 30_000);

  it('dlq retry of a dead run that had slept does not sleep again nor write again', async () => {
    const c = conv;
    const id = await send(p, conversationBody('conversation.created', c, 'dies'));
    const failed = await waitFor(async () => (await p.handlers.getJobs(['failed'])).find((j) => j.id === jobIdFor(id, 'wf-dies')), 10_000);
    expect(failed.failedReason).toMatch(/not cured yet/);
    (globalThis as { __syWfCured?: boolean }).__syWfCured = true;
    try {
      const retriedAt = Date.now();
      expect(await retryDead(p.dlq, { handler: 'wf-dies' })).toHaveLength(1);
      await waitFor(() => runs('dies', { at: 'done', conv: c }).length === 1, 5_000);
      const doneAt = runs('dies', { at: 'done', conv: c })[0]?.['t'] as number;
      // The stored outcome: no second 500 ms sleep (it would park and come back after at least that).
      expect(doneAt - retriedAt).toBeLessThan(450);
      expect(runs('dies', { at: 'after-sleep', conv: c })).toHaveLength(2);
      const writes = (await p.requests({ method: 'POST', path: `/conversations/${c}/notes` })).filter((r) =>
        JSON.stringify(r.body).includes(`dies-before ${id}`),
      );
      expect(writes).toHaveLength(1);
    } finally {
      delete (globalThis as { __syWfCured?: boolean }).__syWfCured;
    }
  }, 20_000);

  it('a handler that catches the park signal and returns is parked all the same, and resumes', async () => {
    const id = await send(p, conversationBody('conversation.opened', conv, 'swallow'));
    await waitFor(() => runs('swallow', { at: 'caught' }).length === 1);
    await waitFor(async () => (await p.handlers.getJob(jobIdFor(id, 'wf-swallow')))?.isDelayed());
    await waitFor(() => runs('swallow', { at: 'done' }).length === 1, 5_000);
    expect(runs('swallow', { at: 'start' })).toHaveLength(2);
    expect(runs('swallow', { at: 'caught' })).toHaveLength(1);
  });

  it('ctx.state in a handler with neither state nor orderBy is dead-lettered with HandlerConfigError naming the handler', async () => {
    const id = await send(p, conversationBody('conversation.opened', conv, 'nostate'));
    const failed = await waitFor(
      async () => (await p.handlers.getJobs(['failed'])).find((j) => j.id === jobIdFor(id, 'wf-swallow')),
      10_000,
    );
    expect(failed.failedReason).toMatch(/handler "wf-swallow" uses ctx.state but has neither "state" nor "orderBy"/);
    expect(failed.attemptsMade).toBe(1);
  });

  it("an ordered run that sleeps keeps its key's turn: the next run of the conversation starts after it is done", async () => {
    const c = 70_006;
    const base = Date.now();
    await send(p, messageBody('message.sent', c, '1', base + 1));
    await send(p, messageBody('message.sent', c, '2', base + 2));
    await waitFor(() => runs('ordered', { at: 'done', conv: c }).length === 2, 10_000);
    const seq = runs('ordered', { conv: c }).map((e) => `${String(e['at'])}${String(e['seq'])}`);
    // 1 starts, sleeps (its key held), replays and is done; only then 2.
    expect(seq).toEqual(['start1', 'start1', 'done1', 'start2', 'start2', 'done2']);
  }, 15_000);
});

describe('durable workflows survive the worker', () => {
  it('a run sleeping while its worker is closed without a graceful stop resumes in a new worker', async () => {
    g.__syWf = [];
    const p = await startPipeline({ handlersDir: WF, env: { WF_SLEEP_MS: '1500' } });
    let fresh: WorkerService | undefined;
    try {
      const r = await sandboxCall(p, 'GET', '/conversations');
      const conv = (r.json.data as { id: number }[])[0]?.id as number;
      const id = await send(p, conversationBody('conversation.opened', conv, 'crash'));
      await waitFor(async () => (await p.handlers.getJob(jobIdFor(id, 'wf-sleeper')))?.isDelayed());
      // Its worker goes away (the run is parked in Redis: nothing of it lives in the process).
      await p.worker.close(0);
      const env = {
        REDIS_URL: testRedisUrl(),
        QUEUE_PREFIX: p.prefix,
        WORKSPACE_API_URL: p.api.baseUrl,
        WORKSPACE_API_TOKEN: SANDBOX_TOKEN,
        WORKSPACE_API_BURST: '100',
        HANDLERS_DIR: WF,
      };
      const dir = await loadHandlerDir(WF);
      const set = new HandlerSet(
        handlerSnapshot(
          dir.handlers.map((l) => l.handler),
          undefined,
          env,
          [],
        ),
      );
      fresh = await startWorker(
        { config: testConfig(env), redisUrl: testRedisUrl(), log: memoryLogger().log, hooks: undefined, set },
        { handlers: openHandlerQueues(p.redis, p.prefix) },
      );
      await waitFor(() => runs('sleeper', { at: 'done', conv }).length === 1, 10_000);
      expect(runs('sleeper', { at: 'step', conv })).toHaveLength(1);
      const notes = (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).filter((q) =>
        JSON.stringify(q.body).includes(id),
      );
      expect(notes).toHaveLength(2);
    } finally {
      await fresh?.close(0);
      await p.close();
    }
  }, 30_000);
});
