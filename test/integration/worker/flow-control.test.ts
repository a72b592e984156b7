import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { messageBody, conversationBody, lifecycleBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';
import { OrderGate } from '../../../src/queue/order.js';
import { ingestKeys } from '../../../src/queue/names.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { listDead, purgeDead, retryDead } from '../../../src/queue/dlq.js';

const FLOW = fileURLToPath(new URL('../../support/handlers/flow', import.meta.url));

type Entry = Record<string, unknown> & { h: string };
const g = globalThis as { __syFlow?: Entry[]; __syFlowOverlap?: string[]; __syCured?: boolean };
const runs = (h: string) => (g.__syFlow ?? []).filter((e) => e.h === h);

async function send(p: Pipeline, body: string): Promise<void> {
  const r = await deliver(p.receiverUrl, body);
  expect(r.status).toBe(202);
}

describe('flow control: order per key, staleness, debounce (signed deliveries in, one worker process)', () => {
  let p: Pipeline;
  beforeAll(async () => {
    process.env['FLOW_FAIL_EVERY'] = '5';
    p = await startPipeline({ handlersDir: FLOW, env: { WORKER_CONCURRENCY: '8' } });
  });
  afterAll(async () => {
    delete process.env['FLOW_FAIL_EVERY'];
    delete process.env['FLOW_SLOW_SEQ'];
    await p?.close();
  });
  beforeEach(() => {
    g.__syFlow = [];
    g.__syFlowOverlap = [];
  });

  it('runs one conversation at a time, in creation order, through retries (8 slots, 12 conversations × 10 events)', async () => {
    const base = Date.now();
    const convs = Array.from({ length: 12 }, (_, i) => 9_000 + i);
    // Each conversation's events are sent in order, all conversations at once.
    await Promise.all(
      convs.map(async (conv) => {
        for (let seq = 1; seq <= 10; seq++) await send(p, messageBody('message.received', conv, String(seq), base + seq));
      }),
    );
    await waitFor(() => runs('ordered').filter((e) => e['at'] === 'done').length === 120, 60_000, 50);
    expect(g.__syFlowOverlap).toEqual([]);
    for (const conv of convs) {
      const starts = runs('ordered').filter((e) => e['conv'] === conv && e['at'] === 'start');
      const done = runs('ordered')
        .filter((e) => e['conv'] === conv && e['at'] === 'done')
        .map((e) => e['seq']);
      expect(done).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      // A failed run was retried in its place: seq 5 and 10 started twice, back to back.
      const order = starts.map((e) => `${String(e['seq'])}.${String(e['attempt'])}`);
      expect(order).toEqual(['1.1', '2.1', '3.1', '4.1', '5.1', '5.2', '6.1', '7.1', '8.1', '9.1', '10.1', '10.2']);
    }
    // Every line is over: nothing left waiting.
    const gate = new OrderGate(p.redis, p.prefix, { doneTtlMs: 60_000 });
    expect(await gate.backlog('ordered')).toEqual({ keys: 0, pending: 0, longest: 0 });
    // Every delivery was fanned out and left the pending set ordered runs wait on.
    expect(await p.redis.zcard(ingestKeys(p.prefix).pendingFanOut)).toBe(0);
  });

  it('an event that arrives while its conversation is busy takes its place by creation time, not arrival', async () => {
    process.env['FLOW_SLOW_SEQ'] = '1';
    const conv = 9_100;
    const base = Date.now();
    await send(p, messageBody('message.received', conv, '1', base + 1));
    await waitFor(() => runs('ordered').some((e) => e['conv'] === conv && e['at'] === 'start'));
    // 3 was created after 2 but arrives first.
    await send(p, messageBody('message.received', conv, '3', base + 3));
    await send(p, messageBody('message.received', conv, '2', base + 2));
    await waitFor(() => runs('ordered').filter((e) => e['conv'] === conv && e['at'] === 'done').length === 3, 20_000);
    delete process.env['FLOW_SLOW_SEQ'];
    expect(
      runs('ordered')
        .filter((e) => e['conv'] === conv && e['at'] === 'done')
        .map((e) => e['seq']),
    ).toEqual([1, 2, 3]);
  });

  it('a dead-lettered run releases its conversation by default (onDead: release)', async () => {
    const conv = 9_200;
    const base = Date.now();
    await send(p, messageBody('message.sent', conv, 'first', base + 1));
    await send(p, messageBody('message.sent', conv, 'poison', base + 2));
    await send(p, messageBody('message.sent', conv, 'after', base + 3));
    await waitFor(() => runs('poison').length === 2, 20_000);
    expect(runs('poison').map((e) => e['body'])).toEqual(['first', 'after']);
    const failed = await p.handlers.getJobs(['failed']);
    expect(failed.filter((j) => j.name === 'poison' && (j.data.event.data as { body?: string }).body === 'poison')).toHaveLength(1);
  });

  it('skipStale skips an assignment created before the last one applied, with a logged reason', async () => {
    const conv = 9_300;
    const base = Date.now();
    await send(p, conversationBody('conversation.assigned', conv, 'newer', base));
    await waitFor(() => runs('latest-status').length === 1);
    const older = conversationBody('conversation.assigned', conv, 'older', base - 5_000);
    await send(p, older);
    const key = (JSON.parse(older) as { id: string }).id;
    await waitFor(async () => (await p.handlers.getJob(jobIdFor(key, 'latest-status')))?.returnvalue as unknown);
    const job = await p.handlers.getJob(jobIdFor(key, 'latest-status'));
    expect(job?.returnvalue).toEqual({ ms: 0, skipped: 'stale' });
    expect(runs('latest-status').map((e) => e['subject'])).toEqual(['newer']);
    expect(p.lines.some((l) => l.includes('"reason":"stale"') && l.includes('run skipped'))).toBe(true);
  });

  it('maxAge skips an event older than the limit and runs a fresh one', async () => {
    const stale = conversationBody('conversation.opened', 9_400, null, Date.now() - 2 * 3_600_000);
    await send(p, stale);
    await send(p, conversationBody('conversation.opened', 9_401, null));
    await waitFor(() => runs('fresh-only').length === 1);
    const key = (JSON.parse(stale) as { id: string }).id;
    await waitFor(async () => (await p.handlers.getJob(jobIdFor(key, 'fresh-only')))?.returnvalue as unknown);
    expect((await p.handlers.getJob(jobIdFor(key, 'fresh-only')))?.returnvalue).toEqual({ ms: 0, skipped: 'max_age' });
    expect(runs('fresh-only').map((e) => e['conv'])).toEqual([9_401]);
    expect(p.lines.some((l) => l.includes('"reason":"max_age"') && l.includes('"maxAgeMs":60000'))).toBe(true);
  });

  it('debounce folds a burst into one run with the latest event and the count', async () => {
    const base = Date.now();
    for (let i = 1; i <= 5; i++) await send(p, lifecycleBody(501, `stage-${i}`, base + i));
    await send(p, lifecycleBody(502, 'only', base));
    await waitFor(() => runs('debounced').length === 2, 10_000);
    await new Promise((r) => setTimeout(r, 600)); // nothing else runs once the bursts are over
    const byContact = Object.fromEntries(runs('debounced').map((e) => [String(e['contact']), e]));
    expect(runs('debounced')).toHaveLength(2);
    expect(byContact['501']).toMatchObject({ stage: 'stage-5', count: 5 });
    expect(byContact['502']).toMatchObject({ stage: 'only', count: 1 });
  });

  it('debounce runs a burst that keeps going no later than maxWait after its first event, and loses no event', async () => {
    // One event every 150 ms for ~3 s: `wait` (400 ms) never passes, so only maxWait (1.5 s) ends each burst.
    const started = Date.now();
    let sent = 0;
    while (Date.now() - started < 3_000) {
      await send(p, lifecycleBody(503, `s-${++sent}`, Date.now()));
      await new Promise((r) => setTimeout(r, 150));
    }
    await waitFor(() => runs('debounced').reduce((n, e) => n + Number(e['count']), 0) === sent, 10_000);
    expect(runs('debounced').length).toBeGreaterThanOrEqual(2);
    expect(runs('debounced').length).toBeLessThan(sent);
    expect(runs('debounced').at(-1)?.['stage']).toBe(`s-${sent}`);
  });
});

describe('order keeps exactly-once writes', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: FLOW, only: ['ordered-note'] });
  });
  afterAll(async () => p?.close());

  it('each event of a conversation writes its note once, in creation order, though half the runs fail after writing', async () => {
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    const base = Date.now();
    for (let i = 1; i <= 6; i++) await send(p, conversationBody('conversation.opened', conv, `n${i}`, base + i));
    const writes = async () => (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).filter((r) => r.status === 201);
    await waitFor(async () => (await writes()).length === 9, 20_000);
    const all = await writes();
    // The fresh writes: one per event, in order; the three retried runs were answered as replays.
    expect(all.filter((r) => !r.replay).map((r) => (r.body as { body: string }).body)).toEqual([
      'ordered n1',
      'ordered n2',
      'ordered n3',
      'ordered n4',
      'ordered n5',
      'ordered n6',
    ]);
    expect(all.filter((r) => r.replay).map((r) => (r.body as { body: string }).body)).toEqual(['ordered n2', 'ordered n4', 'ordered n6']);
    const notes = ((await sandboxCall(p, 'GET', `/conversations/${conv}/messages?per_page=100`)).json.data as { body: string }[]).filter(
      (m) => m.body.startsWith('ordered '),
    );
    expect(notes).toHaveLength(6);
  });
});

describe('onDead: block holds a key until its dead run is retried or purged', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: FLOW, only: ['poison-block'] });
  });
  afterAll(async () => {
    g.__syCured = false;
    await p?.close();
  });
  beforeEach(() => {
    g.__syFlow = [];
  });
  const dlq = () => p.dlq;
  const gate = () => new OrderGate(p.redis, p.prefix, { doneTtlMs: 60_000 });

  it('later runs wait behind the dead one; a retry from the dead-letter queue runs it, then them, in order', async () => {
    const conv = 9_500;
    const base = Date.now();
    for (const [i, body] of ['first', 'poison', 'after', 'last'].entries())
      await send(p, messageBody('message.sent', conv, body, base + i));
    await waitFor(async () => (await p.handlers.getFailedCount()) === 1, 10_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(runs('poison-block').map((e) => e['body'])).toEqual(['first']);
    expect(await gate().backlog('poison-block')).toEqual({ keys: 1, pending: 3, longest: 3 });
    g.__syCured = true;
    expect(await retryDead(dlq(), { handler: 'poison-block' })).toHaveLength(1);
    await waitFor(() => runs('poison-block').length === 4, 10_000);
    expect(runs('poison-block').map((e) => e['body'])).toEqual(['first', 'poison', 'after', 'last']);
    expect(await gate().backlog('poison-block')).toEqual({ keys: 0, pending: 0, longest: 0 });
  });

  it('purging the dead run lets the next ones go on', async () => {
    g.__syCured = false;
    const conv = 9_501;
    const base = Date.now();
    for (const [i, body] of ['poison', 'after'].entries()) await send(p, messageBody('message.sent', conv, body, base + i));
    await waitFor(async () => (await listDead(dlq(), { handler: 'poison-block' })).length === 1, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(runs('poison-block')).toEqual([]);
    expect(await purgeDead(dlq(), { handler: 'poison-block' })).toHaveLength(1);
    await waitFor(() => runs('poison-block').length === 1, 10_000);
    expect(runs('poison-block').map((e) => e['body'])).toEqual(['after']);
  });
});
