/**
 * A wake-up lost with its waker: the events worker ran the event script (the
 * wait is `matched`, its wake-up queued in `wait:wake`) and died before it
 * promoted the parked run. Simulated here by running that script as fan-out
 * does and stopping there. The wake sweep (src/worker/waits.ts `sweepWakes`,
 * every second after 5 s of grace) must promote the run: it resumes with the
 * event once, writes once, and the wake-up is acknowledged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId, messageBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';
import { WaitStore } from '../../../src/queue/waits/wait-store.js';
import { RunRecords } from '../../../src/queue/waits/runs.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { WFF_HANDLERS } from '../../support/faults/workflows.js';

type Mark = { h: string; at: string; id: string; got?: string; t: number };
const g = globalThis as { __syWff?: Mark[] };
const marks = (id: string, at: string) => (g.__syWff ?? []).filter((m) => m.id === id && m.at === at);

describe('the wake sweep redoes a wake-up whose waker died after the event script', () => {
  let p: Pipeline;
  let conv: number;
  const saved = process.env['WFF_NOTE_CONV'];
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: WFF_HANDLERS });
    const r = await sandboxCall(p, 'GET', '/conversations');
    conv = (r.json.data as { id: number }[])[0]?.id as number;
    process.env['WFF_NOTE_CONV'] = String(conv);
    g.__syWff = [];
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env['WFF_NOTE_CONV'];
    else process.env['WFF_NOTE_CONV'] = saved;
    await p?.close();
  });

  it('the parked run is promoted by the sweep within grace + a tick, resumes with the event once and writes once', async () => {
    const c = 77_001;
    const body = conversationBody('conversation.closed', c, 'sweep');
    const id = deliveryId(body);
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    await waitFor(async () => (await new RunRecords(p.redis, p.prefix).parked()).some((r) => r.deliveryKey === id), 10_000);
    const job = await waitFor(async () => {
      const j = await p.handlers.getJob(jobIdFor(id, 'wff-waiter'));
      return j && (await j.isDelayed()) ? j : undefined;
    });
    expect(job.id).toBe(jobIdFor(id, 'wff-waiter'));
    // Let its worker finish parking it (after moveToDelayed it re-reads its waits and would wake itself).
    await new Promise((r) => setTimeout(r, 300));

    // The events worker's part up to its death: the event script answered the wait and queued the wake-up.
    const reply = JSON.parse(messageBody('message.received', c, 'lost waker')) as {
      id: string;
      event: string;
      created_at: string;
      data: unknown;
    };
    const store = new WaitStore(p.redis, p.prefix, 3_600_000);
    const woken = await store.deliver(
      {
        deliveryKey: reply.id,
        name: reply.event,
        receivedAt: Date.now(),
        keys: [`conversation:${c}`],
        body: JSON.stringify({ id: reply.id, name: reply.event, createdAt: reply.created_at, data: reply.data }),
      },
      Date.now(),
      true,
    );
    const queuedAt = Date.now();
    expect(woken).toEqual([{ id: `${jobIdFor(id, 'wff-waiter')}:w:reply`, run: `handlers|${jobIdFor(id, 'wff-waiter')}` }]);
    // Nobody promotes it: still delayed a moment later.
    await new Promise((r) => setTimeout(r, 500));
    expect(await job.isDelayed()).toBe(true);

    await waitFor(() => marks(id, 'done').length >= 1, 12_000, 50);
    const wokeAt = (marks(id, 'woke')[0] as Mark).t;
    // Woken by the sweep: after its 5 s of grace, within a couple of its 1 s ticks.
    expect(wokeAt - queuedAt).toBeGreaterThanOrEqual(4_900);
    expect(wokeAt - queuedAt).toBeLessThan(8_500);
    await new Promise((r) => setTimeout(r, 1_500));
    expect({
      step: marks(id, 'step').length,
      woke: marks(id, 'woke').length,
      done: marks(id, 'done').length,
      got: marks(id, 'done')[0]?.got,
    }).toEqual({ step: 1, woke: 1, done: 1, got: reply.id });
    const notes = (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).filter((n) =>
      JSON.stringify(n.body).includes(id),
    );
    expect(notes.map((n) => [(n.body as { body: string }).body, n.status, n.replay])).toEqual([
      [`before ${id}`, 201, false],
      [`after ${id} ${reply.id}`, 201, false],
    ]);
    expect(await p.redis.zcard(`${p.prefix}:wait:wake`)).toBe(0);
    expect(await p.handlers.getJobCounts('failed')).toEqual({ failed: 0 });
  }, 30_000);
});
