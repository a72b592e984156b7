import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, start, type Harness, type World } from '../../../support/sandbox.js';

// Spec: Contact lifecycle, PUT /contacts/{id}/lifecycle, contact.lifecycle_changed.
let h: Harness;
let acme: World;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
});

describe('lifecycle', () => {
  it('moves by name or id and answers previous and lifecycle stage objects', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'L1' } })).body.data;
    const r = await h.api('PUT', `/contacts/${c.id}/lifecycle`, { body: { stage: 'Qualified' } });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      contact_id: c.id,
      previous: { id: c.lifecycle_stage_id, name: 'New Lead', role: 'default', outcome: null },
      lifecycle: { id: expect.any(Number), name: 'Qualified', role: null, outcome: null },
    });
    const won = acme.lifecycle_stages.find((s) => s.outcome === 'won')!;
    expect((await h.api('PUT', `/contacts/${c.id}/lifecycle`, { body: { stage: won.id } })).body.data.lifecycle.id).toBe(won.id);
  });

  it('answers previous: null when moving to the stage already held, and emits no event', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'L2' } })).body.data;
    await h.hook('DELETE', '/events');
    const r = await h.api('PUT', `/contacts/${c.id}/lifecycle`, { body: { stage: 'New Lead' } });
    expect([r.status, r.body.data.previous, r.body.data.lifecycle.name]).toEqual([200, null, 'New Lead']);
    expect((await h.hook('GET', '/events')).body.data).toEqual([]);
  });

  it('answers 422 for an unknown stage or a missing one', async () => {
    const id = acme.contact_ids[0];
    expect((await h.api('PUT', `/contacts/${id}/lifecycle`, { body: { stage: 'Nope' } })).body.errors).toHaveProperty('stage');
    expect((await h.api('PUT', `/contacts/${id}/lifecycle`, { body: {} })).body.errors).toHaveProperty('stage');
  });

  it('settles the open deals when reaching a stage whose outcome is won', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'Buyer' } })).body.data;
    const d1 = (await h.api('POST', '/deals', { body: { name: 'D1', contact_id: c.id, amount: 10 } })).body.data;
    const lostStage = acme.pipelines[0]!.stages.find((s) => s.kind === 'lost')!;
    const d2 = (await h.api('POST', '/deals', { body: { name: 'D2', contact_id: c.id, stage_id: lostStage.id } })).body.data;
    await h.api('PUT', `/contacts/${c.id}/lifecycle`, { body: { stage: 'Customer' } });
    const after1 = (await h.api('GET', `/deals/${d1.id}`)).body.data;
    expect(after1.status).toBe('won');
    expect(after1.stage.name).toBe('Won');
    expect(after1.closed_at).not.toBeNull();
    expect((await h.api('GET', `/deals/${d2.id}`)).body.data.status).toBe('lost');
  });

  it('applies the same rules on PATCH lifecycle_stage_id and emits contact.lifecycle_changed', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'L3' } })).body.data;
    const q = acme.lifecycle_stages.find((s) => s.name === 'Qualified')!;
    await h.hook('DELETE', '/events');
    expect((await h.api('PATCH', `/contacts/${c.id}`, { body: { lifecycle_stage_id: q.id } })).body.data.lifecycle_stage_id).toBe(q.id);
    const events = await eventually(async () => {
      const list = (await h.hook('GET', '/events')).body.data as {
        event: string;
        data: { contact_id: number; previous: { name: string } };
      }[];
      return list.length ? list : undefined;
    });
    expect(events.map((e) => e.event)).toEqual(['contact.lifecycle_changed']);
    expect(events[0]!.data).toMatchObject({ contact_id: c.id, previous: { name: 'New Lead' }, lifecycle: { name: 'Qualified' } });
  });
});
