import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECONCILE_QUEUE } from '../../../../src/queue/names.js';
import { handlerJobs, SANDBOX_TOKEN, startPipeline, type Pipeline } from '../../../support/pipeline.js';
import { TEST_SECRET, waitFor } from '../../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../../../handlers', import.meta.url));
const OPEN_DAY = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][(new Date().getUTCDay() + 2) % 7] as string;

/** RECONCILE_EVERY in a worker: a lost inbound message is found by the next tick and answered once. */
describe('scheduled reconcile (RECONCILE_EVERY)', () => {
  let p: Pipeline;

  beforeAll(async () => {
    p = await startPipeline({
      handlersDir: HANDLERS,
      only: ['away-reply'],
      env: { BUSINESS_HOURS: `${OPEN_DAY} 09:00-17:00 UTC`, AWAY_MESSAGE: 'We are away', RECONCILE_EVERY: '1s', RECONCILE_WINDOW: '10m' },
    });
  });
  afterAll(async () => p?.close());

  it('one job scheduler; a lost message.received is reconciled and answered once, the report logged', async () => {
    const queue = new Queue(RECONCILE_QUEUE, { connection: p.redis, prefix: p.prefix });
    try {
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers.map((s) => [s.key, s.every])).toEqual([['reconcile-every', 1000]]);
    } finally {
      await queue.close();
    }
    p.sandbox.emitter.configure('http://127.0.0.1:9/webhooks', TEST_SECRET);
    const ws = (
      (await (await fetch(`${p.api.url}/_sandbox/workspaces`)).json()) as { data: { channels: { id: number; type: string }[] }[] }
    ).data[0];
    const r = await fetch(`${p.api.url}/_sandbox/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        contact: { name: 'Night Owl', email: 'owl@example.com' },
        channel_id: ws?.channels.find((c) => c.type === 'whatsapp')?.id,
        body: 'hello?',
      }),
    });
    const { conversation } = ((await r.json()) as { data: { conversation: { id: number } } }).data;
    const replies = async () =>
      (await p.requests({ method: 'POST', path: `/conversations/${conversation.id}/messages` })).filter(
        (x) => x.status === 201 && !x.replay,
      );
    await waitFor(async () => (await replies()).length === 1, 30_000);
    // The reply is written before its job is marked completed: wait for that too.
    await waitFor(async () => (await handlerJobs(p, ['completed'])).some((j) => j.data.handlerId === 'away-reply'), 10_000);
    const jobs = (await handlerJobs(p, ['completed'])).filter((j) => j.data.handlerId === 'away-reply');
    expect(jobs.map((j) => j.data.source)).toEqual(['reconcile']);
    expect(p.lines.some((l) => l.includes('scheduled reconcile:'))).toBe(true);
    // Later ticks find the change received: still one reply.
    await waitFor(() => p.lines.filter((l) => l.includes('scheduled reconcile:')).length >= 3, 30_000);
    expect(await replies()).toHaveLength(1);
  }, 90_000);
});

/**
 * RECONCILE_EVERY with the snapshot: the shipped lead-won recipe makes the worker keep open leads
 * (SNAPSHOT_EVERY); a lead created days ago is won while webhooks are lost, and the next tick finds
 * it from the snapshot and runs the recipe once.
 */
describe('scheduled reconcile from the snapshot (SNAPSHOT_EVERY)', () => {
  let p: Pipeline;

  beforeAll(async () => {
    p = await startPipeline({
      handlersDir: HANDLERS,
      only: ['lead-won'],
      env: { RECONCILE_EVERY: '1s', RECONCILE_WINDOW: '10m', SNAPSHOT_EVERY: '1s' },
    });
  });
  afterAll(async () => p?.close());

  it('an old lead won while webhooks were lost: found from the snapshot, the recipe runs once', async () => {
    await waitFor(() => p.lines.some((l) => l.includes('snapshot: leads baseline taken')), 30_000);
    const lead = (
      (await (await fetch(`${p.api.baseUrl}/leads?outcome=open`, { headers: { authorization: `Bearer ${SANDBOX_TOKEN}` } })).json()) as {
        data: { id: number; contact_id: number; created_at: string }[];
      }
    ).data[0]!;
    expect(Date.parse(lead.created_at)).toBeLessThan(Date.now() - 86_400_000);
    p.sandbox.emitter.configure('http://127.0.0.1:9/webhooks', TEST_SECRET);
    await fetch(`${p.api.url}/_sandbox/leads/${lead.id}/outcome`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'won' }),
    });
    const moves = async () =>
      (await p.requests({ method: 'PUT', path: `/contacts/${lead.contact_id}/lifecycle` })).filter((x) => x.status === 200 && !x.replay);
    await waitFor(async () => (await moves()).length === 1, 30_000);
    await waitFor(async () => (await handlerJobs(p, ['completed'])).some((j) => j.data.handlerId === 'lead-won'), 10_000);
    expect((await handlerJobs(p, ['completed'])).filter((j) => j.data.handlerId === 'lead-won').map((j) => j.data.source)).toEqual([
      'reconcile',
    ]);
    const ticks = p.lines.filter((l) => l.includes('scheduled reconcile:')).length;
    await waitFor(() => p.lines.filter((l) => l.includes('scheduled reconcile:')).length >= ticks + 3, 30_000);
    expect(await moves()).toHaveLength(1);
  }, 90_000);
});
