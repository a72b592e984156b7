import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resumeHandlers, pauseState } from '../../../src/queue/pause.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';

const TEST_HANDLERS = fileURLToPath(new URL('../../support/handlers/notes', import.meta.url));
const RECIPES = fileURLToPath(new URL('../../../handlers', import.meta.url));

async function firstConversation(p: Pipeline): Promise<number> {
  const r = await sandboxCall(p, 'GET', '/conversations');
  return (r.json.data as { id: number }[])[0]?.id as number;
}

const noteWrites = async (p: Pipeline, conv: number) =>
  (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).filter((r) => r.status === 201);

describe('never lose, never repeat (signed deliveries in, writes observed at the sandbox)', () => {
  let p: Pipeline;
  let conv: number;

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: TEST_HANDLERS });
    conv = await firstConversation(p);
  });
  afterAll(async () => p?.close());
  afterEach(async () => {
    await fetch(`${p.api.url}/_sandbox/faults`, { method: 'DELETE' });
  });

  it('a delivery sent three times produces one write', async () => {
    const body = messageBody('message.received', conv);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await deliver(p.receiverUrl, body)).status);
    expect(statuses).toEqual([202, 200, 200]);
    const id = deliveryId(body);
    await waitFor(async () => (await noteWrites(p, conv)).some((r) => (r.body as { body: string }).body === `seen ${id}`));
    await new Promise((r) => setTimeout(r, 300));
    expect((await noteWrites(p, conv)).filter((r) => (r.body as { body: string }).body === `seen ${id}`)).toHaveLength(1);
  });

  it('a burst of 429s delays jobs without failing or losing any', async () => {
    await fetch(`${p.api.url}/_sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/conversations/*/notes', method: 'POST', force_429: true, count: 25 }),
    });
    const bodies = Array.from({ length: 8 }, () => messageBody('message.received', conv));
    for (const b of bodies) expect((await deliver(p.receiverUrl, b)).status).toBe(202);
    const ids = bodies.map((b) => `seen ${deliveryId(b)}`);
    await waitFor(
      async () => {
        const written = new Set((await noteWrites(p, conv)).map((r) => (r.body as { body: string }).body));
        return ids.every((id) => written.has(id));
      },
      60_000,
      200,
    );
    const limited = await p.requests({ method: 'POST', path: '/conversations/*/notes' });
    expect(limited.filter((r) => r.status === 429).length).toBeGreaterThan(0);
    expect(await p.handlers.getJobCounts('failed')).toMatchObject({ failed: 0 });
    const fresh = (await noteWrites(p, conv)).filter((r) => ids.includes((r.body as { body: string }).body) && !r.replay);
    expect(fresh).toHaveLength(8);
  }, 90_000);

  it('token_expired pauses the handlers queue, keeps every job, and all run after resume', async () => {
    await fetch(`${p.api.url}/_sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: '*', token_expired: true }),
    });
    const bodies = Array.from({ length: 5 }, () => messageBody('message.received', conv));
    for (const b of bodies) expect((await deliver(p.receiverUrl, b)).status).toBe(202);
    const paused = await waitFor(() => pauseState(p.redis, p.prefix), 10_000);
    expect(paused.code).toBe('token_expired');
    // The reason is recorded first (SET NX), then the queues pause: wait for the second write too.
    await waitFor(async () => (await p.handlers.isPaused()) || null, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    const counts = await p.handlers.getJobCounts('failed', 'completed', 'wait', 'active', 'delayed');
    expect(counts['failed']).toBe(0);

    await fetch(`${p.api.url}/_sandbox/faults`, { method: 'DELETE' });
    await resumeHandlers(p.redis, p.handlerQueues, p.prefix);
    const ids = bodies.map((b) => `seen ${deliveryId(b)}`);
    await waitFor(
      async () => {
        const written = new Set((await noteWrites(p, conv)).map((r) => (r.body as { body: string }).body));
        return ids.every((id) => written.has(id));
      },
      45_000, // under the whole suite's load the resumed workers take their time; what counts is that all run
      100,
    );
    expect(await p.handlers.getJobCounts('failed')).toMatchObject({ failed: 0 });
    expect(await pauseState(p.redis, p.prefix)).toBeNull();
  }, 90_000);
});

describe('dead-lettering', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: RECIPES, only: ['lead-won'], env: { WON_STAGE: 'Platinum Tier' } });
  });
  afterAll(async () => p?.close());

  it('a 422 is dead-lettered once, with the reason, without retries', async () => {
    const leads = await sandboxCall(p, 'GET', '/leads?outcome=open');
    const lead = (leads.json.data as { id: number; contact_id: number }[])[0];
    await fetch(`${p.api.url}/_sandbox/leads/${lead?.id}/outcome`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'won' }),
    });
    const [failed] = await waitFor(async () => {
      const jobs = await p.handlers.getJobs(['failed']);
      return jobs.length > 0 ? jobs : undefined;
    });
    expect(failed?.failedReason).toMatch(/lifecycle stage "Platinum Tier" does not exist.*WON_STAGE/);
    expect(failed?.attemptsMade).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(await p.requests({ method: 'PUT', path: `/contacts/${lead?.contact_id}/lifecycle` })).toHaveLength(1);
    expect(await p.handlers.getJobCounts('failed', 'delayed', 'wait')).toMatchObject({ failed: 1, delayed: 0, wait: 0 });
  });

  it('an invalid payload is dead-lettered at fan-out with the zod issues and the raw delivery', async () => {
    const body = JSON.stringify({ id: 'evt_bad_shape', event: 'conversation.closed', data: { id: 'not-a-number' } });
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const job = await waitFor(async () => (await p.events.getJobs(['failed'])).find((j) => j.data.key === 'evt_bad_shape'));
    expect(job.failedReason).toMatch(/invalid_data/);
    expect(job.failedReason).toMatch(/data\.id/);
    expect(job.data.body).toBe(body);
    expect(job.attemptsMade).toBe(1);
  });
});
