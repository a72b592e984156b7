import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Harness, type World } from '../../support/sandbox.js';

// A write that changes nothing leaves updated_at alone, so polling by updated_after / since sees no change.
let h: Harness;
let acme: World;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
});

const later = () => h.hook('POST', '/clock', { advance: '1h' });
const eventCount = async () => ((await h.hook('GET', '/events')).body.data as unknown[]).length;

describe('writes that change nothing', () => {
  it('an identical PATCH or PUT of a contact keeps updated_at, emits nothing and is not listed by updated_after', async () => {
    const qualified = acme.lifecycle_stages.find((s) => s.name === 'Qualified')!;
    const fields = { name: 'Nia', email: 'nia@example.com', phone: '+201000000001', lifecycle_stage_id: qualified.id };
    const created = (await h.api('PUT', '/contacts/email:nia@example.com', { body: fields })).body.data;
    await later();
    const since = (await h.hook('GET', '/clock')).body.data.now as string;
    const events = await eventCount();

    const put = await h.api('PUT', '/contacts/email:nia@example.com', { body: fields });
    const patch = await h.api('PATCH', `/contacts/${created.id}`, { body: fields });
    const empty = await h.api('PATCH', `/contacts/${created.id}`, { body: {} });
    expect([put.status, patch.status, empty.status]).toEqual([200, 200, 200]);
    expect([put.body.data.updated_at, patch.body.data.updated_at, empty.body.data.updated_at]).toEqual(Array(3).fill(created.updated_at));
    expect(await eventCount()).toBe(events);
    const polled = (await h.api('GET', `/contacts?updated_after=${encodeURIComponent(since)}&per_page=100`)).body.data as { id: number }[];
    expect(polled.map((c) => c.id)).not.toContain(created.id);

    // A real change still bumps it.
    const renamed = await h.api('PATCH', `/contacts/${created.id}`, { body: { name: 'Nia B' } });
    expect(renamed.body.data.updated_at > created.updated_at).toBe(true);
  });

  it('an identical PATCH of an order keeps updated_at and is not listed by since', async () => {
    const mug = acme.products.find((p) => p.name === 'Mug')!;
    const created = (
      await h.api('POST', '/orders', { body: { contact_id: acme.contact_ids[0], items: [{ product_id: mug.id, quantity: 1 }] } })
    ).body.data;
    const fields = {
      delivery_address: '1 Nile St',
      delivery_city: 'Cairo',
      notes: 'ring twice',
      payment_status: 'paid',
      payment_method: 'cod',
      discount: 1,
      delivery_fee: 2,
    };
    const first = (await h.api('PATCH', `/orders/${created.id}`, { body: fields })).body.data;
    await later();
    const since = (await h.hook('GET', '/clock')).body.data.now as string;

    const again = await h.api('PATCH', `/orders/${created.id}`, { body: fields });
    expect(again.status).toBe(200);
    expect(again.body.data.updated_at).toBe(first.updated_at);
    expect(again.body.data.payment).toEqual(first.payment);
    const polled = (await h.api('GET', `/orders?since=${encodeURIComponent(since)}&per_page=100`)).body.data as { id: number }[];
    expect(polled.map((o) => o.id)).not.toContain(created.id);

    const changed = await h.api('PATCH', `/orders/${created.id}`, { body: { notes: 'knock' } });
    expect(changed.body.data.updated_at > first.updated_at).toBe(true);
  });
});
