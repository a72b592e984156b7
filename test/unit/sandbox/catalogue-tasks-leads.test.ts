import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, start, T, type Harness, type World } from '../../support/sandbox.js';

// Spec: Products (read-only), Tasks (soonest first), older overview leads.
let h: Harness;
let acme: World;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
});

describe('products', () => {
  it('lists products with variants; available is null when stock is not tracked', async () => {
    const r = await h.api('GET', '/products?per_page=100', { token: T.read });
    const bySku = Object.fromEntries(r.body.data.map((p: { sku: string }) => [p.sku, p]));
    expect(bySku.TSHIRT).toMatchObject({
      track_stock: true,
      price: '25.00',
      variants: [
        { sku: 'TSHIRT-S', available: 5, options: { size: 'S' } },
        { sku: 'TSHIRT-M', available: 2 },
      ],
    });
    expect(bySku.POSTER).toMatchObject({
      track_stock: false,
      available: null,
      variants: [{ available: null }, { available: null, price: '15.00' }],
    });
    expect(bySku.MUG.available).toBe(10);
  });

  it('reports a tracked product with variants as the sum of its variants, following their stock', async () => {
    const tshirt = acme.products.find((p) => p.sku === 'TSHIRT')!;
    const read = async () => (await h.api('GET', `/products/${tshirt.id}`)).body.data;
    const before = await read();
    const sum = before.variants.reduce((n: number, v: { available: number }) => n + v.available, 0);
    expect([before.available, sum]).toEqual([7, 7]);
    const medium = tshirt.variants.find((v) => v.sku === 'TSHIRT-M')!.id;
    const order = (
      await h.api('POST', '/orders', { body: { contact_id: acme.contact_ids[0], items: [{ product_variant_id: medium, quantity: 2 }] } })
    ).body.data;
    expect((await h.api('PATCH', `/orders/${order.id}/status`, { body: { status: 'confirmed' } })).status).toBe(200);
    expect((await read()).available).toBe(5);
    expect((await h.api('GET', '/products?search=TSHIRT')).body.data[0].available).toBe(5);
  });

  it('counts only active variants in the product-level available of a tracked product', async () => {
    const tshirt = acme.products.find((p) => p.sku === 'TSHIRT')!;
    const read = async () => (await h.api('GET', `/products/${tshirt.id}`)).body.data;
    // No route deactivates a variant (products are read-only): set it on the sandbox's state.
    const small = h.sandbox.state
      .workspace(acme.id)
      .products.get(tshirt.id)!
      .variants.find((v) => v.sku === 'TSHIRT-S')!;
    small.isActive = false;
    try {
      const p = await read();
      type V = { sku: string; available: number; is_active: boolean };
      expect(p.variants.find((v: V) => v.sku === 'TSHIRT-S')).toMatchObject({ is_active: false, available: 5 });
      const active = p.variants.filter((v: V) => v.is_active).reduce((n: number, v: V) => n + v.available, 0);
      expect(p.available).toBe(active);
      expect((await h.api('GET', '/products?search=TSHIRT')).body.data[0].available).toBe(active);
    } finally {
      small.isActive = true;
    }
  });

  it('filters by active and search; 404 for unknown; needs products:read', async () => {
    const inactive = (await h.api('GET', '/products?active=false')).body.data;
    expect(inactive.map((p: { sku: string }) => p.sku)).toEqual(['CAP-OLD']);
    expect((await h.api('GET', '/products?search=mug')).body.data).toHaveLength(1);
    expect((await h.api('GET', '/products/999999')).status).toBe(404);
    expect((await h.api('GET', '/products', { token: T.contacts })).status).toBe(403);
  });
});

describe('tasks', () => {
  it('creates with the token teammate as default assignee; validates title and due_at', async () => {
    const r = await h.api('POST', '/tasks', {
      body: { title: 'Ring', due_at: '2030-01-01T10:00:00Z', type: 'call', contact_id: acme.contact_ids[0] },
    });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      title: 'Ring',
      type: 'call',
      status: 'open',
      completed_at: null,
      assignee_id: acme.teammates[0]!.id,
      created_by: acme.teammates[0]!.id,
    });
    expect(Object.keys((await h.api('POST', '/tasks', { body: {} })).body.errors).sort()).toEqual(['due_at', 'title']);
    expect((await h.api('POST', '/tasks', { body: { title: 'x', due_at: 'soon' } })).body.errors).toHaveProperty('due_at');
    expect(
      (await h.api('POST', '/tasks', { body: { title: 'x', due_at: '2030-01-01T00:00:00Z', assignee_id: acme.teammates[2]!.id } })).status,
    ).toBe(422);
  });

  it('refuses a field it does not know (names not shown by the spec are never guessed)', async () => {
    const r = await h.api('POST', '/tasks', { body: { title: 'x', due_at: '2030-01-01T00:00:00Z', assignee: acme.teammates[1]!.id } });
    expect([r.status, Object.keys(r.body.errors)]).toEqual([422, ['assignee']]);
    expect(r.body.errors.assignee[0]).toContain('assignee_id');
  });

  it('stamps completed_at when done and clears it when reopened', async () => {
    const t = (await h.api('POST', '/tasks', { body: { title: 'Do', due_at: '2030-01-02T00:00:00Z' } })).body.data;
    const done = await h.api('PATCH', `/tasks/${t.id}`, { body: { status: 'done' } });
    expect(done.body.data.completed_at).not.toBeNull();
    expect((await h.api('PATCH', `/tasks/${t.id}`, { body: { status: 'open' } })).body.data.completed_at).toBeNull();
    expect((await h.api('PATCH', '/tasks/999999', { body: { status: 'done' } })).status).toBe(404);
  });

  it('lists soonest first with status, assignee and due_before filters', async () => {
    await h.api('POST', '/tasks', { body: { title: 'Late', due_at: '2031-01-01T00:00:00Z' } });
    await h.api('POST', '/tasks', { body: { title: 'Early', due_at: '2029-01-01T00:00:00Z' } });
    const list = (await h.api('GET', '/tasks?per_page=100', { token: T.read })).body.data as { due_at: string }[];
    expect(list.map((t) => t.due_at)).toEqual([...list.map((t) => t.due_at)].sort());
    const before = (await h.api('GET', '/tasks?due_before=2029-12-31')).body.data;
    expect(before.every((t: { due_at: string }) => t.due_at <= '2029-12-31T23:59:59.999Z')).toBe(true);
    expect((await h.api('GET', `/tasks?assignee_id=${acme.teammates[1]!.id}`)).body.data).toEqual([]);
    expect((await h.api('POST', '/tasks', { token: T.read, body: { title: 'x', due_at: '2030-01-01T00:00:00Z' } })).status).toBe(403);
  });
});

describe('leads', () => {
  it('opens a lead (value as decimal string, outcome open), emits lead.created, and wins it through the hook', async () => {
    await h.hook('DELETE', '/events');
    const r = await h.api('POST', '/leads', { body: { contact_id: acme.contact_ids[0], name: 'Big one', value: 99.9, source: 'web' } });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ contact_id: acme.contact_ids[0], name: 'Big one', value: '99.90', source: 'web', outcome: 'open' });
    const won = await h.hook('POST', `/leads/${r.body.data.id}/outcome`, { outcome: 'won' });
    expect(won.body.data.outcome).toBe('won');
    const events = await eventually(async () => {
      const e = (await h.hook('GET', '/events')).body.data as { event: string; data: { id: number } }[];
      return e.length >= 2 ? e : undefined;
    });
    expect(events.map((e) => e.event)).toEqual(['lead.created', 'lead.won']);
    expect(events[1]!.data.id).toBe(r.body.data.id);
    await h.hook('POST', `/leads/${r.body.data.id}/outcome`, { outcome: 'lost' });
    expect((await h.hook('GET', '/events')).body.data.at(-1).event).toBe('lead.lost');
  });

  it('validates contact_id and name, filters by outcome and contact, needs leads abilities', async () => {
    expect(Object.keys((await h.api('POST', '/leads', { body: {} })).body.errors).sort()).toEqual(['contact_id', 'name']);
    expect((await h.api('POST', '/leads', { body: { contact_id: 999999, name: 'x' } })).status).toBe(422);
    const open = (await h.api('GET', '/leads?outcome=open', { token: T.read })).body.data;
    expect(open.every((l: { outcome: string }) => l.outcome === 'open')).toBe(true);
    expect((await h.api('GET', '/leads', { token: T.contacts })).status).toBe(403);
    expect((await h.api('POST', '/leads', { token: T.read, body: { contact_id: 1, name: 'x' } })).status).toBe(403);
  });
});
