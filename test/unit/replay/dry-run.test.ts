/**
 * The dry-run fetch of `replay --inline --dry-run`: the API client's own calls
 * through it, with reads answered by the sandbox (in process, no server).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../../src/api/client.js';
import { NotFoundError, ValidationError } from '../../../src/api/errors.js';
import type { CallEvent } from '../../../src/api/transport.js';
import { DRY_ID_BASE } from '../../../src/replay/dry-kit.js';
import { createDryRun, describeDryWrite, DRY_RUN_HEADER, printableBody, type DryWrite } from '../../../src/replay/dry-run.js';
import { DRY_ROUTES } from '../../../src/replay/dry-shapes.js';
import { createSandbox, type Sandbox } from '../../../src/sandbox/index.js';

const BASE_URL = 'http://127.0.0.1/api/v1';
const NOW = '2030-01-02T03:04:05.000Z';
const RESOURCES = fileURLToPath(new URL('../../../src/api/resources/', import.meta.url));

interface Seed {
  teammates: { id: number }[];
  channels: { id: number; name: string }[];
  labels: { id: number; name: string }[];
  lifecycle_stages: { id: number; name: string; role: string | null; outcome: string | null }[];
  products: { id: number; name: string; sku: string; price: string; variants: { id: number }[] }[];
  contact_ids: number[];
  conversation_ids: number[];
  deal_ids: number[];
  task_ids: number[];
}

interface Rig {
  api: ApiClient;
  sandbox: Sandbox;
  seed: Seed;
  /** Requests that reached the sandbox (method and path below the base). */
  sent: string[];
  writes: DryWrite[];
  calls: CallEvent[];
  /** The sandbox's own request log. */
  log(): Promise<{ method: string; path: string }[]>;
  contact(email: string): Promise<{ id: number; name: string; email: string | null; lifecycle_stage_id: number | null }>;
}

async function rig(): Promise<Rig> {
  const sandbox = createSandbox({ burst: 10_000 });
  const app = (path: string, init?: RequestInit) => sandbox.app.fetch(new Request(`http://127.0.0.1${path}`, init));
  const sent: string[] = [];
  const base: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input instanceof URL ? input.href : input);
    sent.push(`${init?.method ?? 'GET'} ${url.pathname.replace('/api/v1', '')}`);
    return sandbox.app.fetch(new Request(url, init));
  };
  const writes: DryWrite[] = [];
  const calls: CallEvent[] = [];
  const dry = createDryRun(base, { baseUrl: BASE_URL, now: () => new Date(NOW) });
  const api = createApiClient({
    baseUrl: BASE_URL,
    token: 'sbx_full_acme',
    fetch: dry.fetch((w) => writes.push(w)),
    onCall: (c) => calls.push(c),
    rateLimiter: false,
  });
  const seed = ((await (await app('/_sandbox/workspaces')).json()) as { data: Seed[] }).data[0]!;
  return {
    api,
    sandbox,
    seed,
    sent,
    writes,
    calls,
    log: async () => ((await (await app('/_sandbox/requests')).json()) as { data: { method: string; path: string }[] }).data,
    contact: async (email) => (await api.contacts.list({ email }).toArray())[0]!,
  };
}

const isReadRequest = (r: string): boolean => r.startsWith('GET ') || r === 'POST /contacts/search';

describe('every write operation of the client', () => {
  let r: Rig;
  beforeEach(async () => {
    r = await rig();
  });

  /** One call of each write the client has, on the seeded records; `status` is what the real endpoint answers on success. */
  const WRITES: { op: string; status: number; call: (r: Rig) => Promise<{ status: number; headers: Headers }> }[] = [
    {
      op: 'contacts.create',
      status: 201,
      call: ({ api }) => api.contacts.create({ name: 'Dora', email: 'dora@example.com' }).withResponse(),
    },
    {
      op: 'contacts.update',
      status: 200,
      call: async (r) => r.api.contacts.update((await r.contact('alice@example.com')).id, { name: 'Alicia' }).withResponse(),
    },
    { op: 'contacts.upsert', status: 201, call: ({ api }) => api.contacts.upsert('email:eve@example.com', { name: 'Eve' }).withResponse() },
    { op: 'contacts.delete', status: 204, call: ({ api, seed }) => api.contacts.delete(seed.contact_ids[0]!).withResponse() },
    {
      op: 'contacts.merge',
      status: 200,
      call: ({ api, seed }) => api.contacts.merge({ survivor: seed.contact_ids[0]!, loser: `id:${seed.contact_ids[1]!}` }).withResponse(),
    },
    {
      op: 'contacts.setLifecycle',
      status: 200,
      call: ({ api, seed }) => api.contacts.setLifecycle(seed.contact_ids[1]!, 'Qualified').withResponse(),
    },
    {
      op: 'contacts.labels.add',
      status: 200,
      call: ({ api, seed }) => api.contacts.labels.add(seed.contact_ids[1]!, ['vip']).withResponse(),
    },
    {
      op: 'contacts.labels.remove',
      status: 200,
      call: async (r) => r.api.contacts.labels.remove((await r.contact('carol@example.com')).id, 'vip').withResponse(),
    },
    {
      op: 'conversations.open',
      status: 201,
      call: ({ api, seed }) => api.conversations.open({ contact: seed.contact_ids[1]!, channel_id: seed.channels[0]!.id }).withResponse(),
    },
    {
      op: 'conversations.update',
      status: 200,
      call: ({ api, seed }) => api.conversations.close(seed.conversation_ids[0]!, { category: 'Resolved' }).withResponse(),
    },
    { op: 'messages.send', status: 201, call: ({ api, seed }) => api.messages.sendText(seed.conversation_ids[0]!, 'Hello').withResponse() },
    {
      op: 'notes.create',
      status: 201,
      call: ({ api, seed }) =>
        api.notes.create(seed.conversation_ids[0]!, { body: 'Call back', mentions: [seed.teammates[0]!.id] }).withResponse(),
    },
    {
      op: 'deals.create',
      status: 201,
      call: ({ api, seed }) => api.deals.create({ name: 'Bulk', amount: 12.5, contact_id: seed.contact_ids[0]! }).withResponse(),
    },
    {
      op: 'deals.update',
      status: 200,
      call: ({ api, seed }) => api.deals.update(seed.deal_ids[0]!, { amount: 99, closed_lost_reason: null }).withResponse(),
    },
    {
      op: 'orders.create',
      status: 201,
      call: ({ api, seed }) =>
        api.orders
          .create({
            contact_id: seed.contact_ids[0]!,
            items: [{ product_id: seed.products[0]!.id, product_variant_id: seed.products[0]!.variants[0]!.id, quantity: 2 }],
          })
          .withResponse(),
    },
    {
      op: 'orders.update',
      status: 200,
      call: async ({ api }) =>
        api.orders
          .update((await api.orders.create({ contact_id: 1, items: [{ name: 'Box', unit_price: 3, quantity: 1 }] })).id, {
            notes: 'Ring twice',
          })
          .withResponse(),
    },
    {
      op: 'orders.setStatus',
      status: 200,
      call: async ({ api }) =>
        api.orders
          .setStatus((await api.orders.create({ contact_id: 1, items: [{ name: 'Box', unit_price: 3, quantity: 1 }] })).id, 'confirmed')
          .withResponse(),
    },
    {
      op: 'tasks.create',
      status: 201,
      call: ({ api }) => api.tasks.create({ title: 'Call', due_at: '2030-01-03T00:00:00Z' }).withResponse(),
    },
    { op: 'tasks.update', status: 200, call: ({ api, seed }) => api.tasks.update(seed.task_ids[0]!, { status: 'done' }).withResponse() },
    {
      op: 'leads.create',
      status: 201,
      call: ({ api, seed }) => api.leads.create({ contact_id: seed.contact_ids[0]!, name: 'Lead', value: 10 }).withResponse(),
    },
  ];

  it.each(WRITES)(
    "$op: not sent, answered $status in the spec's shape (the client validated it), marked dry",
    async ({ op, status, call }) => {
      const res = await call(r);
      expect(res.status).toBe(status);
      expect(res.headers.get(DRY_RUN_HEADER)).toBe('1');
      const mine = r.writes.filter((w) => w.op === op);
      expect(mine).toHaveLength(1);
      expect(r.calls.filter((c) => c.op === op).map((c) => [c.method, c.status])).toEqual([[mine[0]!.method, status]]);
      expect(r.sent.filter((s) => !isReadRequest(s))).toEqual([]);
      expect((await r.log()).filter((l) => !isReadRequest(`${l.method} ${l.path}`))).toEqual([]);
    },
  );

  it('the cases above are every write of src/api/resources, and the dry routes are exactly those writes', () => {
    const READS = [
      'contacts.list',
      'contacts.get',
      'contacts.search',
      'contacts.labels.list',
      'conversations.list',
      'conversations.get',
      'conversations.closingNotes',
      'messages.list',
      'messages.get',
      'deals.list',
      'deals.get',
      'orders.list',
      'orders.get',
      'products.list',
      'products.get',
      'tasks.list',
      'leads.list',
    ];
    const prefixes = 'contacts|conversations|messages|notes|deals|orders|products|tasks|leads';
    const inSource = new Set(
      readdirSync(RESOURCES).flatMap((f) =>
        [...readFileSync(`${RESOURCES}${f}`, 'utf8').matchAll(new RegExp(`'((?:${prefixes})\\.[a-zA-Z.]+)'`, 'g'))].map((m) => m[1]!),
      ),
    );
    const tested = WRITES.map((w) => w.op);
    expect([...inSource].sort()).toEqual([...READS, ...tested].sort());
    expect(DRY_ROUTES.map((d) => d.op).sort()).toEqual([...tested].sort());
  });
});

describe('reads', () => {
  it('go to the API unchanged (GET and the contact search); no dry header', async () => {
    const r = await rig();
    const alice = await r.contact('alice@example.com');
    const res = await r.api.contacts.get(alice.id).withResponse();
    expect(res.data).toMatchObject({ id: alice.id, name: 'Alice Adams' });
    expect(res.headers.get(DRY_RUN_HEADER)).toBeNull();
    expect(await r.api.contacts.search({ match: [[{ attribute: 'label', operator: 'has', value: 'vip' }]] }).toArray()).toEqual([
      expect.objectContaining({ email: 'carol@example.com' }),
    ]);
    expect(r.sent).toEqual(['GET /contacts', `GET /contacts/${alice.id}`, 'POST /contacts/search']);
    expect(r.writes).toEqual([]);
  });

  it('of a record this run wrote are answered from it (the API still has the original)', async () => {
    const r = await rig();
    const alice = await r.contact('alice@example.com');
    await r.api.contacts.update(alice.id, { name: 'Alicia' });
    const again = await r.api.contacts.get(alice.id).withResponse();
    expect(again.data).toMatchObject({ id: alice.id, name: 'Alicia', email: 'alice@example.com' });
    expect(again.headers.get(DRY_RUN_HEADER)).toBe('1');
    const created = await r.api.contacts.create({ name: 'Dora' });
    expect(await r.api.contacts.get(created.id)).toMatchObject({ name: 'Dora' });
    await r.api.contacts.delete(created.id);
    await expect(r.api.contacts.get(created.id)).rejects.toBeInstanceOf(NotFoundError);
    const direct = await r.sandbox.app.fetch(
      new Request(`http://127.0.0.1/api/v1/contacts/${alice.id}`, { headers: { authorization: 'Bearer sbx_full_acme' } }),
    );
    expect(((await direct.json()) as { data: { name: string } }).data.name).toBe('Alice Adams');
  });
});

describe('the answers', () => {
  let r: Rig;
  beforeEach(async () => {
    r = await rig();
  });

  it("a create: the request body, a dry id, timestamps from the clock, the spec's defaults; the call recorded as it would be sent", async () => {
    const me = r.seed.teammates[0]!.id;
    const t = await r.api.tasks.create(
      { title: 'Call Bob', due_at: '2030-01-03T00:00:00Z', contact_id: r.seed.contact_ids[1]! },
      { idempotencyKey: 'k-1' },
    );
    expect(t).toEqual({
      id: DRY_ID_BASE + 1,
      title: 'Call Bob',
      description: null,
      type: 'todo',
      status: 'open',
      due_at: '2030-01-03T00:00:00Z',
      completed_at: null,
      assignee_id: me,
      created_by: me,
      contact_id: r.seed.contact_ids[1],
    });
    expect(r.writes).toEqual([
      {
        op: 'tasks.create',
        method: 'POST',
        path: '/tasks',
        query: '',
        idempotencyKey: 'k-1',
        status: 201,
        body: { title: 'Call Bob', due_at: '2030-01-03T00:00:00Z', contact_id: r.seed.contact_ids[1] },
      },
    ]);
    expect(await r.api.tasks.update(t.id, { status: 'done' })).toMatchObject({
      id: t.id,
      title: 'Call Bob',
      status: 'done',
      completed_at: NOW,
    });
    const c = await r.api.contacts.create({ name: 'Dora', phone: '+49 30 1234567' });
    expect(c).toEqual({
      id: DRY_ID_BASE + 2,
      name: 'Dora',
      phone: '+49 30 1234567',
      email: null,
      lifecycle_stage_id: null,
      blocked: false,
      created_at: NOW,
      updated_at: NOW,
    });
    expect(await r.api.deals.create({ name: 'Bulk', amount: 12.5 })).toMatchObject({
      amount: '12.50',
      source: 'other',
      status: 'open',
      closed_at: null,
      contact_ids: [],
    });
    expect(await r.api.leads.create({ contact_id: 7, name: 'L', value: 1200.5 })).toMatchObject({
      contact_id: 7,
      name: 'L',
      value: '1200.50',
      outcome: 'open',
    });
  });

  it('a change: the current record (read first) with the fields sent; an unknown id answers 404 as the API would', async () => {
    const alice = await r.contact('alice@example.com');
    expect(await r.api.contacts.update(alice.id, { name: 'Alicia' })).toEqual({ ...alice, name: 'Alicia', updated_at: NOW });
    const conv = r.seed.conversation_ids[0]!;
    expect(await r.api.conversations.close(conv)).toMatchObject({ id: conv, status: 'closed', closed_at: NOW });
    expect(await r.api.conversations.assign(conv, { type: 'user', id: 21 })).toMatchObject({
      status: 'closed',
      assignee: { type: 'user', id: 21 },
    });
    await expect(r.api.contacts.update(999_999, { name: 'X' })).rejects.toBeInstanceOf(NotFoundError);
    await expect(r.api.messages.sendText(999_999, 'Hi')).rejects.toBeInstanceOf(NotFoundError);
    await expect(r.api.contacts.upsert('id:999999', { name: 'X' })).rejects.toBeInstanceOf(NotFoundError);
    expect(r.writes.map((w) => w.status)).toEqual([200, 200, 200, 404, 404, 404]);
  });

  it('upsert: 200 for the contact at an address, 201 with the address for a new one', async () => {
    const a = await r.api.contacts.upsert('email:ALICE@example.com', { name: 'Al' }).withResponse();
    expect(a).toMatchObject({ status: 200, data: { name: 'Al', email: 'alice@example.com' } });
    const n = await r.api.contacts.upsert('email:new@example.com', { name: 'New' }).withResponse();
    expect(n).toMatchObject({ status: 201, data: { id: DRY_ID_BASE + 1, name: 'New', email: 'new@example.com' } });
    expect(r.writes[1]!.path).toBe('/contacts/email%3Anew%40example.com');
  });

  it('lifecycle: the stage held as previous and the stage moved to (found by a read search), or previous null when already there', async () => {
    const stage = (name: string) => r.seed.lifecycle_stages.find((s) => s.name === name)!;
    const bob = r.seed.contact_ids[1]!;
    expect(await r.api.contacts.setLifecycle(bob, 'Customer')).toEqual({
      contact_id: bob,
      previous: stage('New Lead'),
      lifecycle: stage('Customer'),
    });
    const carol = await r.contact('carol@example.com');
    expect(await r.api.contacts.setLifecycle(carol.id, stage('Customer').id)).toEqual({
      contact_id: carol.id,
      previous: null,
      lifecycle: stage('Customer'),
    });
    expect(r.sent.filter((s) => s === 'POST /contacts/search')).toHaveLength(1);
  });

  it("labels: the contact's labels after the call", async () => {
    const carol = await r.contact('carol@example.com');
    const names = (l: { name: string }[]) => l.map((x) => x.name).sort();
    expect(names(await r.api.contacts.labels.add(carol.id, ['vip', 'newsletter']))).toEqual(['customer', 'newsletter', 'vip']);
    expect(names(await r.api.contacts.labels.remove(carol.id, 'vip'))).toEqual(['customer', 'newsletter']);
  });

  it("messages and notes: by the token's teammate in the thread", async () => {
    const conv = r.seed.conversation_ids[0]!;
    const me = r.seed.teammates[0]!.id;
    expect(await r.api.messages.sendText(conv, 'Hello')).toEqual({
      id: DRY_ID_BASE + 1,
      conversation_id: conv,
      type: 'message',
      direction: 'outbound',
      sender_type: 'user',
      user_id: me,
      body: 'Hello',
      content_type: 'text',
      status: 'sent',
      created_at: NOW,
    });
    expect(await r.api.notes.create(conv, { body: 'Psst' })).toMatchObject({
      type: 'note',
      direction: null,
      body: 'Psst',
      status: null,
      user_id: me,
    });
  });

  it('conversations.open: the live thread on the channel (200) when there is one', async () => {
    const alice = await r.contact('alice@example.com');
    const whatsapp = r.seed.channels.find((c) => c.name === 'WhatsApp')!;
    const res = await r.api.conversations.open({ contact: 'email:alice@example.com', channel_id: whatsapp.id }).withResponse();
    expect(res).toMatchObject({
      status: 200,
      data: { contact_id: alice.id, channel: { id: whatsapp.id, name: 'WhatsApp' }, status: 'open' },
    });
    expect(res.data.id).toBeLessThan(DRY_ID_BASE);
  });

  it('orders: catalogue lines snapshotted from a read of the product, totals, status moves stamped', async () => {
    const mug = r.seed.products.find((p) => p.name === 'Mug')!;
    const o = await r.api.orders.create({
      contact_id: r.seed.contact_ids[0]!,
      items: [
        { product_id: mug.id, quantity: 2 },
        { name: 'Wrap', unit_price: 1.5, quantity: 1 },
      ],
      delivery_fee: 4,
      discount: 1,
    });
    expect(o).toMatchObject({ status: 'new', source: 'api', payment: { status: 'unpaid' }, delivery: { fee: '4.00' }, discount: '1.00' });
    expect(o.items).toMatchObject([
      { product_id: mug.id, name: 'Mug', sku: mug.sku, quantity: 2, unit_price: mug.price },
      { product_id: null, name: 'Wrap', unit_price: '1.50', line_total: '1.50' },
    ]);
    const sub = 2 * Number(mug.price) + 1.5;
    expect([o.subtotal, o.total]).toEqual([sub.toFixed(2), (sub - 1 + 4).toFixed(2)]);
    expect(await r.api.orders.update(o.id, { discount: 0, payment_status: 'paid' })).toMatchObject({
      discount: '0.00',
      total: (sub + 4).toFixed(2),
      payment: { status: 'paid', paid_at: NOW },
    });
    expect(await r.api.orders.setStatus(o.id, 'confirmed')).toMatchObject({ status: 'confirmed', confirmed_at: NOW });
    await expect(r.api.orders.create({ contact_id: 1, items: [{ product_id: 999_999, quantity: 1 }] })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });
});

describe('what is printed', () => {
  it('a write the API does not have is not sent either: 400 saying so', async () => {
    const sent: string[] = [];
    const dry = createDryRun(
      async (i) => {
        sent.push(i instanceof Request ? i.url : i instanceof URL ? i.href : i);
        return new Response('{}');
      },
      { baseUrl: BASE_URL },
    );
    const writes: DryWrite[] = [];
    const res = await dry.fetch((w) => writes.push(w))(`${BASE_URL}/campaigns`, { method: 'POST', body: '{"x":1}' });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/the API has no POST \/campaigns; not sent/);
    expect(writes).toEqual([expect.objectContaining({ op: null, path: '/campaigns', body: { x: 1 }, idempotencyKey: null })]);
    expect(sent).toEqual([]);
  });

  it('one line: method, path, Idempotency-Key and JSON body, with secret-named fields redacted', () => {
    const w: DryWrite = {
      op: 'tasks.create',
      method: 'POST',
      path: '/tasks',
      query: '',
      body: { title: 'T', meta: { token: 'abc', password: 'pw' } },
      idempotencyKey: 'sy_replay_x',
      status: 201,
    };
    expect(describeDryWrite(w)).toBe(
      'dry POST /tasks  Idempotency-Key: sy_replay_x  {"title":"T","meta":{"token":"[redacted]","password":"[redacted]"}}',
    );
    expect(describeDryWrite({ ...w, method: 'DELETE', path: '/contacts/5', body: undefined, idempotencyKey: null })).toBe(
      'dry DELETE /contacts/5  no Idempotency-Key',
    );
    expect(printableBody([{ secret: 's' }])).toEqual([{ secret: '[redacted]' }]);
  });
});
