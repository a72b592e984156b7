/**
 * Every endpoint of the spec, called through the client against the sandbox over HTTP.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import { startSandbox, type AcmeSeed, type SandboxHarness } from '../../support/sandbox.js';

let h: SandboxHarness;
let api: ApiClient;
let seed: AcmeSeed;

beforeAll(async () => {
  h = await startSandbox();
  api = h.client();
});
beforeEach(async () => {
  await h.hook('POST', '/reset');
  seed = await h.seed();
});
afterAll(async () => {
  await h.close();
});

const whatsapp = () => seed.channels.find((c) => c.name === 'WhatsApp')!;
const label = (name: string) => seed.labels.find((l) => l.name === name)!;

describe('account', () => {
  it('me()', async () => {
    const me = await api.me();
    expect(me.user.name).toBe('Olivia Owner');
    expect(me.abilities).toContain('contacts:read');
  });
});

describe('contacts', () => {
  it('list: for await walks every cursor page; .pages() page at a time; filters', async () => {
    const names: string[] = [];
    for await (const c of api.contacts.list({ per_page: 1 })) names.push(c.name);
    expect(names).toEqual(['Carol Chen', 'Bob Brown', 'Alice Adams']);
    const pages = [];
    for await (const p of api.contacts.list({ per_page: 2 }).pages()) pages.push(p.data.length);
    expect(pages).toEqual([2, 1]);
    const vip = await api.contacts.list({ label: 'vip' }).toArray();
    expect(vip.map((c) => c.name)).toEqual(['Carol Chen']);
    const byEmail = await api.contacts.list({ email: 'ALICE@example.com', include: ['labels'] }).toArray();
    expect(byEmail).toHaveLength(1);
    expect(byEmail[0]!['labels']).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'customer' })]));
  });

  it('get by id, id:, email: and phone: identifiers (URL-encoded), with include', async () => {
    const [alice] = await api.contacts.list({ email: 'alice@example.com' }).toArray();
    expect((await api.contacts.get(alice!.id)).name).toBe('Alice Adams');
    expect((await api.contacts.get(`id:${alice!.id}`)).id).toBe(alice!.id);
    expect((await api.contacts.get('email:alice@example.com')).id).toBe(alice!.id);
    expect((await api.contacts.get('phone:+201001234567')).id).toBe(alice!.id);
    const withBlocks = await api.contacts.get(alice!.id, { include: ['labels', 'lifecycle'] });
    expect(withBlocks['labels']).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'customer' })]));
    expect(withBlocks['lifecycle']).toMatchObject({ id: alice!.lifecycle_stage_id });
    expect(alice!['labels']).toBeUndefined(); // blocks only when asked for
  });

  it('create (201), update (PATCH), upsert (PUT 201 then 200), delete (204)', async () => {
    const created = await api.contacts.create({ name: 'Dan Doe', email: 'dan@example.com' }).withResponse();
    expect(created.status).toBe(201);
    expect(created.replayed).toBe(false);
    expect(created.idempotencyKey).toBeTruthy();
    const updated = await api.contacts.update(created.data.id, { name: 'Daniel Doe' });
    expect(updated.name).toBe('Daniel Doe');
    const up1 = await api.contacts.upsert('email:erin@example.com', { name: 'Erin' }).withResponse();
    expect(up1.status).toBe(201);
    const up2 = await api.contacts.upsert('email:erin@example.com', { name: 'Erin E.' }).withResponse();
    expect(up2.status).toBe(200);
    expect(up2.data.id).toBe(up1.data.id);
    await expect(api.contacts.delete(created.data.id)).resolves.toBeUndefined();
    await expect(api.contacts.get(created.data.id)).rejects.toMatchObject({ status: 404 });
  });

  it('search: typed rule groups, segment_id, paging', async () => {
    const vipOrNoEmail = await api.contacts
      .search({ match: [[{ attribute: 'label', operator: 'has', value: 'vip' }], [{ attribute: 'email', operator: 'not_set' }]] })
      .toArray();
    expect(vipOrNoEmail.map((c) => c.name).sort()).toEqual(['Bob Brown', 'Carol Chen']);
    const bySegment = await api.contacts.search({ segment_id: seed.segments[0]!.id }).toArray();
    expect(bySegment.map((c) => c.name)).toEqual(['Carol Chen']);
    const pages = [];
    for await (const p of api.contacts.search({ per_page: 2 }).pages()) pages.push(p.data.length);
    expect(pages).toEqual([2, 1]);
  });

  it('merge: the survivor is returned and the loser removed', async () => {
    const loser = await api.contacts.create({ name: 'Alice dup', email: 'alice.dup@example.com' });
    const survivor = await api.contacts.merge({ survivor: 'email:alice@example.com', loser: loser.id });
    expect(survivor.name).toBe('Alice Adams');
    await expect(api.contacts.get(loser.id)).rejects.toMatchObject({ status: 404 });
  });

  it('setLifecycle by stage name and id; previous is null on the same stage', async () => {
    const qualified = seed.lifecycle_stages.find((s) => s.name === 'Qualified')!;
    const moved = await api.contacts.setLifecycle('email:alice@example.com', 'Qualified');
    expect(moved.lifecycle.id).toBe(qualified.id);
    expect(moved.previous).not.toBeNull();
    const again = await api.contacts.setLifecycle('email:alice@example.com', qualified.id);
    expect(again.previous).toBeNull();
  });

  it('labels: list, add (ids or names), remove', async () => {
    const ref = 'email:alice@example.com' as const;
    expect((await api.contacts.labels.list(ref)).map((l) => l.name)).toEqual(['customer']);
    const after = await api.contacts.labels.add(ref, ['vip', label('newsletter').id]);
    expect(after.map((l) => l.name).sort()).toEqual(['customer', 'newsletter', 'vip']);
    const remaining = await api.contacts.labels.remove(ref, 'vip');
    expect(remaining.map((l) => l.name).sort()).toEqual(['customer', 'newsletter']);
    expect((await api.contacts.labels.remove(ref, label('vip').id)).length).toBe(2); // absent: not an error
  });
});

describe('conversations', () => {
  it('list with filters, get, closingNotes', async () => {
    const open = await api.conversations.list({ status: 'open' }).toArray();
    expect(open.length).toBeGreaterThan(0);
    expect(open.every((c) => c.status === 'open')).toBe(true);
    const one = await api.conversations.get(open[0]!.id);
    expect(one.id).toBe(open[0]!.id);
    const notes = await api.conversations.closingNotes();
    expect(notes.map((n) => n.category)).toEqual(seed.closing_notes.map((n) => n.category));
  });

  it('open: 201 new thread, 200 for the live one', async () => {
    const first = await api.conversations.open({ contact: 'email:carol@example.com', channel_id: whatsapp().id }).withResponse();
    expect(first.status).toBe(201);
    const again = await api.conversations.open({ contact: 'email:carol@example.com', channel_id: whatsapp().id }).withResponse();
    expect(again.status).toBe(200);
    expect(again.data.id).toBe(first.data.id);
  });

  it('update: assign, snooze (future), close with a category', async () => {
    const [conv] = await api.conversations.list({ status: 'open', channel_id: whatsapp().id }).toArray();
    const teammate = seed.teammates.find((t) => t.active)!;
    const assigned = await api.conversations.assign(conv!.id, { type: 'user', id: teammate.id });
    expect(assigned.assignee).toEqual({ type: 'user', id: teammate.id });
    const snoozed = await api.conversations.snooze(conv!.id, new Date(Date.now() + 3_600_000));
    expect(snoozed.status).toBe('snoozed');
    const closed = await api.conversations.close(conv!.id, { category: 'Resolved', summary: 'Answered' });
    expect(closed.status).toBe('closed');
    expect(closed.closed_at).not.toBeNull();
    const reopened = await api.conversations.update(conv!.id, { status: 'open', priority: 'high' });
    expect(reopened.status).toBe('open');
  });
});

describe('messages and notes', () => {
  it('list, get, and send each of the four kinds', async () => {
    const [conv] = await api.conversations.list({ status: 'open', channel_id: whatsapp().id }).toArray();
    const history = await api.messages.list(conv!.id).toArray();
    expect(history.length).toBeGreaterThan(0);
    expect((await api.messages.get(history[0]!.id)).id).toBe(history[0]!.id);

    const text = await api.messages.sendText(conv!.id, 'Your order ships today').withResponse();
    expect(text.status).toBe(201);
    expect(text.data.body).toBe('Your order ships today');
    const att = await api.messages.sendAttachment(conv!.id, { url: 'https://example.com/invoice.pdf', caption: 'Invoice' });
    expect(att.conversation_id).toBe(conv!.id);
    const tpl = await api.messages.sendTemplate(conv!.id, { template: 'order_update', parameters: ['Alice', '#1001'] });
    expect(tpl.id).toBeGreaterThan(0);
    const btn = await api.messages.sendButtons(conv!.id, 'Was this helpful?', ['Yes', 'No']);
    expect(btn.id).toBeGreaterThan(0);
    const viaUnion = await api.messages.send(conv!.id, { type: 'text', text: 'union form' });
    expect(viaUnion.body).toBe('union form');
  });

  it('public comment thread: text with reply_to', async () => {
    const comments = seed.channels.find((c) => c.public)!;
    const [thread] = await api.conversations.list({ channel_id: comments.id }).toArray();
    const reply = await api.messages.sendText(thread!.id, 'Thank you!', { reply_to: 'cmt_1' });
    expect(reply.body).toBe('Thank you!');
    await expect(api.messages.sendText(thread!.id, 'no reply_to', {}, {})).rejects.toMatchObject({ status: 422 });
  });

  it('notes.create: an internal note with mentions', async () => {
    const [conv] = await api.conversations.list({ status: 'open' }).toArray();
    const teammate = seed.teammates.find((t) => t.active)!;
    const note = await api.notes.create(conv!.id, { body: 'VIP, handle with care', mentions: [teammate.id] });
    expect(note.type).toBe('note');
    expect(note.direction).toBeNull();
  });
});

describe('deals', () => {
  it('list, get, create, update (won through the Won stage)', async () => {
    const sales = seed.pipelines.find((p) => p.name === 'Sales')!;
    const [existing] = await api.deals.list({ status: 'open' }).toArray();
    expect((await api.deals.get(existing!.id)).amount).toMatch(/^\d+\.\d{2}$/);
    const [alice] = await api.contacts.list({ email: 'alice@example.com' }).toArray();
    const deal = await api.deals.create({
      name: 'Renewal',
      amount: 99.5,
      contact_id: alice!.id,
      pipeline_id: sales.id,
      close_date: '2026-12-31',
    });
    expect(deal.amount).toBe('99.50');
    expect(deal.source).toBe('other');
    const won = await api.deals.update(deal.id, { stage_id: sales.stages.find((s) => s.kind === 'won')!.id });
    expect(won.status).toBe('won');
    const lost = await api.deals.update(deal.id, {
      stage_id: sales.stages.find((s) => s.kind === 'lost')!.id,
      closed_lost_reason: 'Budget',
    });
    expect(lost).toMatchObject({ status: 'lost', closed_lost_reason: 'Budget' });
  });
});

describe('orders and products', () => {
  it('products list (with variants) and get', async () => {
    const all = await api.products.list().toArray();
    expect(all.length).toBe(seed.products.length);
    const active = await api.products.list({ active: true }).toArray();
    expect(active.every((p) => p.is_active)).toBe(true);
    const p = await api.products.get(all[0]!.id);
    expect(p.price).toMatch(/^\d+\.\d{2}$/);
  });

  it('orders create, get, list, update, setStatus through the lifecycle (force on shortage)', async () => {
    const [alice] = await api.contacts.list({ email: 'alice@example.com' }).toArray();
    const mug = seed.products.find((p) => p.name === 'Mug')!;
    const order = await api.orders
      .create({
        contact_id: alice!.id,
        items: [
          { product_id: mug.id, quantity: 2 },
          { name: 'Gift wrap', quantity: 1, unit_price: 3 },
        ],
        delivery_fee: 5,
        payment_method: 'cod',
        external_id: 'shop-1001',
      })
      .withResponse();
    expect(order.status).toBe(201);
    expect(order.data).toMatchObject({ status: 'new', subtotal: '28.00', total: '33.00' });
    expect((await api.orders.get(order.data.id)).items).toHaveLength(2);
    expect((await api.orders.list({ status: 'open' }).toArray()).map((o) => o.id)).toContain(order.data.id);
    const updated = await api.orders.update(order.data.id, { notes: 'Leave at the door', delivery_city: 'Cairo' });
    expect(updated.notes).toBe('Leave at the door');
    for (const s of ['confirmed', 'preparing', 'out_for_delivery', 'delivered'] as const) {
      expect((await api.orders.setStatus(order.data.id, s)).status).toBe(s);
    }
    // Shortage: more than the stock of a tracked product needs force.
    const short = await api.orders.create({ contact_id: alice!.id, items: [{ product_id: mug.id, quantity: 500 }] });
    await expect(api.orders.setStatus(short.id, 'confirmed')).rejects.toMatchObject({ status: 422 });
    expect((await api.orders.setStatus(short.id, 'confirmed', { force: true })).status).toBe('confirmed');
  });
});

describe('tasks and leads', () => {
  it('tasks list, create, update (done stamps completed_at)', async () => {
    const tasks = await api.tasks.list({ status: 'open' }).toArray();
    expect(tasks.length).toBeGreaterThan(0);
    const t = await api.tasks.create({ title: 'Follow up', due_at: new Date(Date.now() + 86_400_000) });
    expect(t.status).toBe('open');
    const done = await api.tasks.update(t.id, { status: 'done' });
    expect(done.completed_at).not.toBeNull();
  });

  it('leads list and create', async () => {
    const leads = await api.leads.list({ outcome: 'open' }).toArray();
    expect(leads.length).toBeGreaterThan(0);
    const [bob] = await api.contacts.list({ search: 'Bob' }).toArray();
    const lead = await api.leads.create({ contact_id: bob!.id, name: 'Bob retail', value: 120 });
    expect(lead).toMatchObject({ name: 'Bob retail', value: '120.00', outcome: 'open' });
  });
});

describe('idempotency against the sandbox', () => {
  it('the same key replays the first answer (Idempotent-Replay: true) and does the work once', async () => {
    const [conv] = await api.conversations.list({ status: 'open', channel_id: whatsapp().id }).toArray();
    const key = `test-${Date.now()}`;
    const first = await api.messages.sendText(conv!.id, 'once', {}, { idempotencyKey: key }).withResponse();
    const second = await api.messages.sendText(conv!.id, 'once', {}, { idempotencyKey: key }).withResponse();
    expect(first.replayed).toBe(false);
    expect(second.replayed).toBe(true);
    expect(second.data.id).toBe(first.data.id);
    const log = await h.hook<{ idempotency_key: string }[]>('GET', `/requests?idempotency_key=${key}`);
    expect(log).toHaveLength(2);
  });

  it('every IK write sends a key; reads and search send none', async () => {
    await h.hook('DELETE', '/requests');
    await api.contacts.create({ name: 'K' });
    await api.contacts.search({}).firstPage();
    await api.contacts.list().firstPage();
    const log = await h.hook<{ method: string; path: string; idempotency_key: string | null }[]>('GET', '/requests');
    expect(log.map((e) => [e.method, e.path, e.idempotency_key !== null])).toEqual([
      ['POST', '/contacts', true],
      ['POST', '/contacts/search', false],
      ['GET', '/contacts', false],
    ]);
  });

  it('the token never appears in the request URL the sandbox saw', async () => {
    await api.contacts.list({ per_page: 5 }).firstPage();
    const log = await h.hook<{ query: Record<string, string>; token: { label: string } }[]>('GET', '/requests?path=/contacts');
    expect(JSON.stringify(log)).not.toContain('sbx_full_acme');
    expect(log.at(-1)!.token.label).toBe('full');
  });
});
