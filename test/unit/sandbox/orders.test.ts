import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness, type World } from '../../support/sandbox.js';

// Spec: Orders, Order status (stock reserved on confirm, released on cancel, sold on delivery, restocked on return).
let h: Harness;
let acme: World;
let mugId: number;
let tshirtM: number;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
  mugId = acme.products.find((p) => p.sku === 'MUG')!.id;
  tshirtM = acme.products.find((p) => p.sku === 'TSHIRT')!.variants.find((v) => v.sku === 'TSHIRT-M')!.id;
});
afterAll(async () => {
  await h.close();
});

const available = async (): Promise<{ mug: number; tshirtM: number }> => {
  const mug = (await h.api('GET', `/products/${mugId}`)).body.data;
  const tshirt = (await h.api('GET', '/products?search=TSHIRT')).body.data[0];
  return { mug: mug.available, tshirtM: tshirt.variants.find((v: { id: number }) => v.id === tshirtM).available };
};
const place = (items: unknown[], extra: Record<string, unknown> = {}) =>
  h.api('POST', '/orders', { body: { contact_id: acme.contact_ids[0], items, ...extra } });
const move = (id: number, status: string, force?: boolean) =>
  h.api('PATCH', `/orders/${id}/status`, { body: { status, ...(force === undefined ? {} : { force }) } });

describe('placing orders', () => {
  it('places in new with snapshotted lines and money as two-decimal strings', async () => {
    const r = await place(
      [
        { product_id: mugId, quantity: 2 },
        { name: 'Gift wrap', quantity: 1, unit_price: 1.5 },
      ],
      { delivery_fee: 3, discount: 0.5 },
    );
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      status: 'new',
      subtotal: '26.50',
      discount: '0.50',
      total: '29.00',
      delivery: { fee: '3.00' },
      payment: { method: 'cod', status: 'unpaid', reference: null, paid_at: null },
    });
    expect(r.body.data.items[0]).toMatchObject({
      product_id: mugId,
      name: 'Mug',
      sku: 'MUG',
      quantity: 2,
      unit_price: '12.50',
      line_total: '25.00',
    });
    expect(r.body.data.items[1]).toMatchObject({ product_id: null, name: 'Gift wrap', unit_price: '1.50' });
  });

  it('validates the body: items min 1, quantity min 1, free-text line needs name and unit_price, variant needed', async () => {
    expect((await place([])).body.errors).toHaveProperty('items');
    expect((await place([{ product_id: mugId, quantity: 0 }])).body.errors).toHaveProperty(['items.0.quantity']);
    expect((await place([{ quantity: 1 }])).body.errors).toHaveProperty(['items.0.name']);
    expect((await place([{ name: 'x', quantity: 1 }])).body.errors).toHaveProperty(['items.0.unit_price']);
    const tshirt = acme.products.find((p) => p.sku === 'TSHIRT')!.id;
    expect((await place([{ product_id: tshirt, quantity: 1 }])).body.errors).toHaveProperty(['items.0.product_variant_id']);
    expect((await place([{ product_id: 999999, quantity: 1 }])).status).toBe(422);
    expect((await h.api('POST', '/orders', { body: { items: [{ product_id: mugId, quantity: 1 }] } })).body.errors).toHaveProperty(
      'contact_id',
    );
  });

  it('refuses an unknown payment method, a duplicate external_id, an external_id over 191', async () => {
    expect((await place([{ product_id: mugId, quantity: 1 }], { payment_method: 'bitcoin' })).body.errors).toHaveProperty('payment_method');
    expect((await place([{ product_id: mugId, quantity: 1 }], { payment_method: 'wallet', external_id: 'ext-1' })).status).toBe(201);
    expect((await place([{ product_id: mugId, quantity: 1 }], { external_id: 'ext-1' })).body.errors).toHaveProperty('external_id');
    expect((await place([{ product_id: mugId, quantity: 1 }], { external_id: 'e'.repeat(192) })).body.errors).toHaveProperty('external_id');
    expect((await place([{ product_id: mugId, quantity: 1 }], { external_id: 'e'.repeat(191) })).status).toBe(201);
  });
});

describe('status moves and stock', () => {
  it('walks new -> confirmed -> preparing -> out_for_delivery -> delivered -> returned with the stock right', async () => {
    const before = await available();
    const o = (await place([{ product_id: mugId, quantity: 3 }])).body.data;
    expect((await available()).mug).toBe(before.mug);
    const confirmed = await move(o.id, 'confirmed');
    expect([confirmed.status, confirmed.body.data.status]).toEqual([200, 'confirmed']);
    expect(confirmed.body.data.confirmed_at).not.toBeNull();
    expect((await available()).mug).toBe(before.mug - 3);
    await move(o.id, 'preparing');
    await move(o.id, 'out_for_delivery');
    const delivered = await move(o.id, 'delivered');
    expect(delivered.body.data.delivered_at).not.toBeNull();
    expect((await available()).mug).toBe(before.mug - 3);
    expect((await move(o.id, 'returned')).body.data.status).toBe('returned');
    expect((await available()).mug).toBe(before.mug);
  });

  it('refuses a confirm on shortage with 422 unless force, and releases reserved stock on cancel', async () => {
    const before = (await available()).tshirtM;
    const o = (await place([{ product_variant_id: tshirtM, quantity: before + 1 }])).body.data;
    const short = await move(o.id, 'confirmed');
    expect(short.status).toBe(422);
    expect(short.body.errors).toHaveProperty(['items.0.quantity']);
    expect((await h.api('GET', `/orders/${o.id}`)).body.data.status).toBe('new');
    expect((await move(o.id, 'confirmed', true)).body.data.status).toBe('confirmed');
    expect((await available()).tshirtM).toBe(-1);
    const cancelled = await move(o.id, 'cancelled');
    expect(cancelled.body.data.status).toBe('cancelled');
    expect(cancelled.body.data.cancelled_at).not.toBeNull();
    expect((await available()).tshirtM).toBe(before);
  });

  it('does not touch stock when cancelling a new order or for untracked products', async () => {
    const before = await available();
    const o = (await place([{ product_id: mugId, quantity: 1 }])).body.data;
    await move(o.id, 'cancelled');
    expect(await available()).toEqual(before);
    const gift = acme.products.find((p) => p.sku === 'GIFT')!.id;
    const g = (await place([{ product_id: gift, quantity: 500 }])).body.data;
    expect((await move(g.id, 'confirmed')).status).toBe(200);
    expect((await h.api('GET', `/products/${gift}`)).body.data.available).toBeNull();
  });

  it.each([
    [[], 'delivered'],
    [[], 'preparing'],
    [[], 'returned'],
    [['confirmed'], 'confirmed'],
    [['confirmed'], 'delivered'],
    [['confirmed', 'preparing', 'out_for_delivery', 'delivered'], 'cancelled'],
    [['cancelled'], 'confirmed'],
    [['cancelled'], 'new'],
    [['confirmed', 'preparing', 'out_for_delivery', 'delivered', 'returned'], 'delivered'],
  ])('refuses every other move (after %j, to %s) with 422', async (path, to) => {
    const o = (await place([{ name: 'svc', quantity: 1, unit_price: 1 }])).body.data;
    for (const step of path) expect((await move(o.id, step)).status).toBe(200);
    const r = await move(o.id, to);
    expect(r.status).toBe(422);
    expect(r.body.errors).toHaveProperty('status');
  });

  it('never changes status through the general update, which changes delivery, payment, notes, discount, owner', async () => {
    const o = (await place([{ product_id: mugId, quantity: 1 }])).body.data;
    expect((await h.api('PATCH', `/orders/${o.id}`, { body: { status: 'confirmed' } })).status).toBe(422);
    const r = await h.api('PATCH', `/orders/${o.id}`, {
      body: { delivery_city: 'Cairo', delivery_fee: 5, payment_status: 'paid', notes: 'Ring twice' },
    });
    expect(r.body.data).toMatchObject({
      status: 'new',
      delivery: { city: 'Cairo', fee: '5.00' },
      payment: { status: 'paid' },
      notes: 'Ring twice',
      total: '17.50',
    });
    expect(r.body.data.payment.paid_at).not.toBeNull();
    expect((await h.api('PATCH', `/orders/${o.id}`, { body: { discount: 1000 } })).status).toBe(422);
  });

  it('refuses fields it does not know with 422 naming each of them (the service declines to guess), changing nothing', async () => {
    const o = (await place([{ product_id: mugId, quantity: 1 }], { notes: 'as placed' })).body.data;
    const r = await h.api('PATCH', `/orders/${o.id}`, { body: { notes: 'changed', delivery_adress: 'Nile St 1', colour: 'red' } });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors).sort()).toEqual(['colour', 'delivery_adress']);
    expect(r.body.errors.colour[0]).toContain('delivery_address');
    expect((await h.api('GET', `/orders/${o.id}`)).body.data.notes).toBe('as placed');
    const line = await place([{ product_id: mugId, quantity: 1, qty: 2 }]);
    expect([line.status, Object.keys(line.body.errors)]).toEqual([422, ['items.0.qty']]);
    const status = await h.api('PATCH', `/orders/${o.id}/status`, { body: { status: 'cancelled', reason: 'x' } });
    expect([status.status, Object.keys(status.body.errors)]).toEqual([422, ['reason']]);
  });

  it('lists with the open filter, payment_status and since; needs orders abilities', async () => {
    const open = (await h.api('GET', '/orders?status=open&per_page=100', { token: T.read })).body.data;
    expect(open.length).toBeGreaterThan(0);
    expect(open.every((o: { status: string }) => !['delivered', 'cancelled', 'returned'].includes(o.status))).toBe(true);
    const paid = (await h.api('GET', '/orders?payment_status=paid')).body.data;
    expect(paid.every((o: { payment: { status: string } }) => o.payment.status === 'paid')).toBe(true);
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect((await h.api('GET', `/orders?since=${encodeURIComponent(future)}`)).body.data).toEqual([]);
    expect((await h.api('GET', '/orders?status=shipped')).status).toBe(422);
    expect((await h.api('PATCH', '/orders/1/status', { token: T.read, body: { status: 'confirmed' } })).status).toBe(403);
    expect((await h.api('GET', '/orders/999999')).status).toBe(404);
  });
});

describe('order amounts', () => {
  it('keeps what an order adds up within the money bound: a line or a total over it is 422, never a garbled amount', async () => {
    const big = 9999999999999.99;
    const one = await place([{ name: 'Yacht', quantity: 1, unit_price: big }]);
    expect([one.status, one.body.data.total]).toEqual([201, '9999999999999.99']);
    const line = await place([{ name: 'Yachts', quantity: 2, unit_price: big }]);
    expect([line.status, line.body.errors['items.0.quantity']]).toEqual([422, ['makes a line total over 9999999999999.99']]);
    const sum = await place([{ name: 'Yacht', quantity: 1, unit_price: big }], { delivery_fee: 1 });
    expect([sum.status, sum.body.errors.items]).toEqual([422, ['the order adds up to more than 9999999999999.99']]);
    expect((await place([{ name: 'Cap', quantity: 1, unit_price: 1e300 }])).body.errors).toHaveProperty(['items.0.unit_price']);
  });
});
