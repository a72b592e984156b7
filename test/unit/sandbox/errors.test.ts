import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Harness, type World } from '../../support/sandbox.js';

// Spec: Errors, 422 "a value names something that does not exist (label, stage, template, segment rule,
// closing-note category)": the service declines to guess, in query filters and body fields alike.
let h: Harness;
let acme: World;
let other: World;
let thread: number; // an open WhatsApp thread of Acme
let comments: number; // the seeded public comment thread, whose inbound comment is cmt_1
let orderId: number;
let dealId: number;
let taskId: number;
beforeAll(async () => {
  h = await start();
  [acme, other] = await h.world();
  const wa = acme.channels.find((c) => c.type === 'whatsapp')!;
  thread = (await h.api('GET', `/conversations?channel_id=${wa.id}&status=open`)).body.data[0].id;
  comments = (await h.api('GET', `/conversations?channel_id=${acme.channels.find((c) => c.public)!.id}`)).body.data[0].id;
  orderId = (
    await h.api('POST', '/orders', { body: { contact_id: acme.contact_ids[0], items: [{ name: 'x', quantity: 1, unit_price: 1 }] } })
  ).body.data.id;
  dealId = acme.deal_ids[0]!;
  taskId = acme.task_ids[0]!;
});
afterAll(async () => {
  await h.close();
});

const NONE = 999_999;

describe('query filters naming nothing answer 422, not an empty page', () => {
  it.each([
    ['/contacts?lifecycle_stage_id=', 'lifecycle_stage_id'],
    ['/conversations?contact_id=', 'contact_id'],
    ['/conversations?channel_id=', 'channel_id'],
    ['/deals?contact_id=', 'contact_id'],
    ['/deals?pipeline_id=', 'pipeline_id'],
    ['/orders?contact_id=', 'contact_id'],
    ['/tasks?assignee_id=', 'assignee_id'],
    ['/tasks?contact_id=', 'contact_id'],
    ['/leads?contact_id=', 'contact_id'],
  ])('%s<unknown id> -> 422 naming %s', async (path, field) => {
    const r = await h.api('GET', `${path}${NONE}`);
    expect([r.status, Object.keys(r.body.errors ?? {})]).toEqual([422, [field]]);
  });

  it('treats a record of another workspace as naming nothing', async () => {
    for (const path of [
      `/conversations?contact_id=${other.contact_ids[0]}`,
      `/deals?pipeline_id=${other.pipelines[0]!.id}`,
      `/contacts?lifecycle_stage_id=${other.lifecycle_stages[0]!.id}`,
      `/tasks?assignee_id=${other.teammates[0]!.id}`,
    ]) {
      expect((await h.api('GET', path)).status, path).toBe(422);
    }
  });

  it('still answers 200 for filters naming real records, and refuses an unknown task status', async () => {
    for (const path of [
      `/contacts?lifecycle_stage_id=${acme.lifecycle_stages[0]!.id}`,
      `/conversations?contact_id=${acme.contact_ids[0]}`,
      `/deals?pipeline_id=${acme.pipelines[1]!.id}`,
      `/tasks?assignee_id=${acme.teammates[2]!.id}`,
      `/leads?contact_id=${acme.contact_ids[0]}`,
    ]) {
      expect((await h.api('GET', path)).status, path).toBe(200);
    }
    expect(Object.keys((await h.api('GET', '/tasks?status=finished')).body.errors)).toEqual(['status']);
  });
});

describe('body fields naming nothing answer 422 naming the field', () => {
  // [what, method, path, body, field]; path and body may be thunks, as ids are read in beforeAll.
  const cases: [string, string, string | (() => string), unknown, string][] = [
    ['team', 'PATCH', () => `/conversations/${thread}`, { team_id: NONE }, 'team_id'],
    ['team of another workspace', 'PATCH', () => `/conversations/${thread}`, () => ({ team_id: other.teams[0]!.id }), 'team_id'],
    ['AI agent', 'PATCH', () => `/conversations/${thread}`, { assignee: { type: 'ai', id: NONE } }, 'assignee.id'],
    ['teammate assignee', 'PATCH', () => `/conversations/${thread}`, { assignee: { type: 'user', id: NONE } }, 'assignee.id'],
    ['closing-note category', 'PATCH', () => `/conversations/${thread}`, { status: 'closed', category: 'Nope' }, 'category'],
    ['channel', 'POST', '/conversations', { contact: 'email:alice@example.com', channel_id: NONE }, 'channel_id'],
    [
      'reply_to comment',
      'POST',
      () => `/conversations/${comments}/messages`,
      { type: 'text', text: 'hi', reply_to: 'cmt_nope' },
      'reply_to',
    ],
    [
      'reply_to off a comment thread',
      'POST',
      () => `/conversations/${thread}/messages`,
      { type: 'text', text: 'hi', reply_to: 'cmt_1' },
      'reply_to',
    ],
    ['template', 'POST', () => `/conversations/${thread}/messages`, { type: 'template', template: 'nope' }, 'template'],
    ['mention', 'POST', () => `/conversations/${thread}/notes`, { body: 'n', mentions: [NONE] }, 'mentions.0'],
    ['deal owner', 'POST', '/deals', { name: 'd', owner_id: NONE }, 'owner_id'],
    ['deal pipeline', 'POST', '/deals', { name: 'd', pipeline_id: NONE }, 'pipeline_id'],
    ['deal contact', 'POST', '/deals', { name: 'd', contact_id: NONE }, 'contact_id'],
    ['deal owner on update', 'PATCH', () => `/deals/${dealId}`, { owner_id: NONE }, 'owner_id'],
    ['deal stage', 'PATCH', () => `/deals/${dealId}`, { stage_id: NONE }, 'stage_id'],
    ['order contact', 'POST', '/orders', { contact_id: NONE, items: [{ name: 'x', quantity: 1, unit_price: 1 }] }, 'contact_id'],
    [
      'order conversation',
      'POST',
      '/orders',
      () => ({ contact_id: acme.contact_ids[0], items: [{ name: 'x', quantity: 1, unit_price: 1 }], conversation_id: NONE }),
      'conversation_id',
    ],
    [
      'order variant',
      'POST',
      '/orders',
      () => ({ contact_id: acme.contact_ids[0], items: [{ product_variant_id: NONE, quantity: 1 }] }),
      'items.0.product_variant_id',
    ],
    ['order payment method', 'PATCH', () => `/orders/${orderId}`, { payment_method: 'bitcoin' }, 'payment_method'],
    ['order owner', 'PATCH', () => `/orders/${orderId}`, { owner_id: NONE }, 'owner_id'],
    ['task assignee', 'POST', '/tasks', { title: 't', due_at: '2031-01-01T00:00:00Z', assignee_id: NONE }, 'assignee_id'],
    ['task contact', 'PATCH', () => `/tasks/${taskId}`, { contact_id: NONE }, 'contact_id'],
    ['lead contact', 'POST', '/leads', { contact_id: NONE, name: 'l' }, 'contact_id'],
    ['contact stage', 'POST', '/contacts', { name: 'c', lifecycle_stage_id: NONE }, 'lifecycle_stage_id'],
    ['lifecycle stage', 'PUT', '/contacts/email:alice@example.com/lifecycle', { stage: 'Nope' }, 'stage'],
    ['label', 'POST', '/contacts/email:alice@example.com/labels', { labels: ['nope'] }, 'labels.0'],
    ['merge side', 'POST', '/contacts/merge', { survivor: 'email:alice@example.com', loser: 'email:nobody@example.com' }, 'loser'],
  ];
  it.each(cases)('%s', async (_what, method, path, body, field) => {
    const r = await h.api(method, typeof path === 'string' ? path : path(), { body: typeof body === 'function' ? body() : body });
    expect([r.status, Object.keys(r.body.errors ?? {})]).toEqual([422, [field]]);
  });

  it('takes a team and an AI agent of the workspace, and null to clear', async () => {
    const team = acme.teams[0]!;
    expect((await h.api('PATCH', `/conversations/${thread}`, { body: { team_id: team.id } })).status).toBe(200);
    expect((await h.api('PATCH', `/conversations/${thread}`, { body: { team_id: null } })).status).toBe(200);
    const ai = await h.api('PATCH', `/conversations/${thread}`, { body: { assignee: { type: 'ai', id: acme.ai_agents[0]!.id } } });
    expect(ai.body.data.assignee).toEqual({ type: 'ai', id: acme.ai_agents[0]!.id });
  });

  it('takes reply_to naming an inbound comment of the thread, including one that arrived through the inbound hook', async () => {
    expect(
      (await h.api('POST', `/conversations/${comments}/messages`, { body: { type: 'text', text: 'hi', reply_to: 'cmt_1' } })).status,
    ).toBe(201);
    const inbound = await h.hook('POST', '/inbound', { conversation_id: comments, body: 'Price?' });
    const comment = inbound.body.data.message.comment_id as string;
    expect(comment).toMatch(/^cmt_\d+$/);
    expect(
      (await h.api('POST', `/conversations/${comments}/messages`, { body: { type: 'text', text: '9.99', reply_to: comment } })).status,
    ).toBe(201);
  });
});
