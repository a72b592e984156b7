import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/service.js';
import { handlerJobs, sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';

const HANDLERS = fileURLToPath(new URL('../../../handlers', import.meta.url));
const OPEN_DAY = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][(new Date().getUTCDay() + 2) % 7] as string;

/**
 * The shipped recipes end to end: the sandbox changes state and emits a
 * signed event to the receiver; the worker runs the recipe; its writes are
 * observed in the sandbox.
 */
describe('recipes against the sandbox', () => {
  let p: Pipeline;
  let world: {
    teammates: { id: number; name: string; active: boolean }[];
    channels: { id: number; type: string }[];
    lifecycle_stages: { id: number; name: string; outcome: string | null }[];
  };

  beforeAll(async () => {
    p = await startPipeline({
      handlersDir: HANDLERS,
      // Open only two days from now (UTC): closed all of today, whenever the test runs.
      env: { FOLLOW_UP_DAYS: '3', BUSINESS_HOURS: `${OPEN_DAY} 09:00-17:00 UTC`, AWAY_MESSAGE: 'We are away', MERGE_DUPLICATES: 'true' },
    });
    world = ((await (await fetch(`${p.api.url}/_sandbox/workspaces`)).json()) as { data: (typeof world)[] }).data[0] as typeof world;
  });
  afterAll(async () => p?.close());

  it('follow-up-task: closing a conversation creates one call task for its assignee, due FOLLOW_UP_DAYS later', async () => {
    const convs = await sandboxCall(p, 'GET', '/conversations?status=open');
    const conv = (convs.json.data as { id: number; contact_id: number }[])[0];
    expect(conv).toBeDefined();
    const sam = world.teammates.find((t) => t.name === 'Sam Support');
    expect((await sandboxCall(p, 'PATCH', `/conversations/${conv?.id}`, { assignee: { type: 'user', id: sam?.id } })).status).toBe(200);
    const closed = await sandboxCall(p, 'PATCH', `/conversations/${conv?.id}`, { status: 'closed', category: 'Resolved' });
    expect(closed.status).toBe(200);
    const closedAt = (closed.json.data as { closed_at: string }).closed_at;
    const created = await waitFor(async () => (await p.requests({ method: 'POST', path: '/tasks' })).find((r) => r.status === 201));
    const body = created.body as Record<string, unknown>;
    expect(body).toMatchObject({ type: 'call', contact_id: conv?.contact_id, assignee_id: sam?.id });
    expect(body['title']).toMatch(/^Follow up with /);
    expect(Date.parse(String(body['due_at'])) - Date.parse(closedAt)).toBe(3 * 86_400_000);
    expect(created.idempotency_key).toMatch(/^sy_/);
  });

  it('lead-won: moves the contact to the won stage and labels it customer', async () => {
    const leads = await sandboxCall(p, 'GET', '/leads?outcome=open');
    const lead = (leads.json.data as { id: number; contact_id: number }[])[0];
    expect(lead).toBeDefined();
    const won = world.lifecycle_stages.find((st) => st.outcome === 'won');
    const labelNames = async () =>
      ((await sandboxCall(p, 'GET', `/contacts/${lead?.contact_id}/labels`)).json.data as { name: string }[]).map((l) => l.name);
    const stageOf = async () =>
      ((await sandboxCall(p, 'GET', `/contacts/${lead?.contact_id}`)).json.data as { lifecycle_stage_id: number | null })
        .lifecycle_stage_id;
    // Before: neither the won stage nor the label, so the assertions below can only pass through the handler.
    expect(await stageOf()).not.toBe(won?.id);
    expect(await labelNames()).not.toContain('customer');
    await fetch(`${p.api.url}/_sandbox/leads/${lead?.id}/outcome`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'won' }),
    });
    await waitFor(async () =>
      (await p.requests({ method: 'POST', path: `/contacts/${lead?.contact_id}/labels` })).some((r) => r.status === 200),
    );
    expect(await stageOf()).toBe(won?.id);
    expect(await labelNames()).toContain('customer');
    const lifecycle = await p.requests({ method: 'PUT', path: `/contacts/${lead?.contact_id}/lifecycle` });
    expect(lifecycle.filter((r) => r.status === 200)).toHaveLength(1);
  });

  it('away-reply: answers an inbound message outside business hours once per closed period', async () => {
    // The sandbox's clock is now; the business hours are closed all day.
    const first = await fetch(`${p.api.url}/_sandbox/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        contact: { name: 'Night Owl', email: 'owl@example.com' },
        channel_id: world.channels.find((c) => c.type === 'whatsapp')?.id,
        body: 'hello?',
      }),
    });
    expect(first.status).toBe(201);
    const { conversation } = ((await first.json()) as { data: { conversation: { id: number } } }).data;
    const sends = () => p.requests({ method: 'POST', path: `/conversations/${conversation.id}/messages` });
    await waitFor(async () => (await sends()).some((r) => r.status === 201));
    await fetch(`${p.api.url}/_sandbox/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ conversation_id: conversation.id, body: 'anyone?' }),
    });
    // The second inbound message is processed (its away-reply job completes, in the high queue) without a second reply.
    await waitFor(
      async () => (await p.handlerQueues.high.getJobs(['completed'])).filter((j) => j.name === 'away-reply').length >= 2,
      10_000,
    );
    const fresh = (await sends()).filter((r) => r.status === 201 && !r.replay);
    expect(fresh).toHaveLength(1);
    expect((fresh[0]?.body as { text?: string }).text).toBe('We are away');
  });

  it('away-reply: a message older than its maxAge (10 minutes) gets no reply; the run is skipped with its reason', async () => {
    // The sandbox's clock two hours back: the event says the message came in then.
    await fetch(`${p.api.url}/_sandbox/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ set: new Date(Date.now() - 2 * 3_600_000).toISOString() }),
    });
    try {
      const first = await fetch(`${p.api.url}/_sandbox/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          contact: { name: 'Late Bird', email: 'late@example.com' },
          channel_id: world.channels.find((c) => c.type === 'whatsapp')?.id,
          body: 'still there?',
        }),
      });
      expect(first.status).toBe(201);
      const { conversation } = ((await first.json()) as { data: { conversation: { id: number } } }).data;
      const skipped = await waitFor(async () =>
        (await handlerJobs(p, ['completed'])).find(
          (j) => j.name === 'away-reply' && (j.data.event.data as { conversation_id?: number }).conversation_id === conversation.id,
        ),
      );
      expect(skipped.returnvalue).toEqual({ ms: 0, skipped: 'max_age' });
      expect(await p.requests({ method: 'POST', path: `/conversations/${conversation.id}/messages` })).toEqual([]);
    } finally {
      await fetch(`${p.api.url}/_sandbox/clock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ set: new Date().toISOString() }),
      });
    }
  });

  it('merge-duplicates: a new contact with the email of an older one is merged into it', async () => {
    const older = await sandboxCall(p, 'POST', '/contacts', { name: 'Dana Older', email: 'dana@example.com' });
    expect(older.status).toBe(201);
    const olderId = (older.json.data as { id: number }).id;
    await new Promise((r) => setTimeout(r, 20));
    const dup = await sandboxCall(p, 'POST', '/contacts', { name: 'Dana Dup', email: 'DANA@example.com' });
    const dupId = (dup.json.data as { id: number }).id;
    const merge = await waitFor(async () => (await p.requests({ method: 'POST', path: '/contacts/merge' })).find((r) => r.status === 200));
    expect(merge.body).toEqual({ survivor: olderId, loser: dupId });
    expect((await sandboxCall(p, 'GET', `/contacts/${dupId}`)).status).toBe(404);
  });
});
