import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness, type World } from '../../support/sandbox.js';

// Spec: Authentication 9 (a token sees its own workspace only; another workspace's record answers 404).
let h: Harness;
let acme: World;
let other: World;
beforeAll(async () => {
  h = await start();
  [acme, other] = await h.world();
});
afterAll(async () => {
  await h.close();
});

describe('workspace scoping', () => {
  it('answers 404 for every kind of record of the other workspace', async () => {
    const c = other.contact_ids[0]!;
    const checks: [string, string, unknown?][] = [
      ['GET', `/contacts/${c}`],
      ['GET', `/contacts/id:${c}`],
      ['GET', '/contacts/email:zed@example.com'],
      ['PATCH', `/contacts/${c}`, { name: 'x' }],
      ['PUT', `/contacts/id:${c}`, { name: 'x' }],
      ['DELETE', `/contacts/${c}`],
      ['GET', `/contacts/${c}/labels`],
      ['PUT', `/contacts/${c}/lifecycle`, { stage: 'Qualified' }],
      ['GET', `/conversations/${other.conversation_ids[0]}`],
      ['PATCH', `/conversations/${other.conversation_ids[0]}`, { status: 'closed' }],
      ['GET', `/conversations/${other.conversation_ids[0]}/messages`],
      ['POST', `/conversations/${other.conversation_ids[0]}/messages`, { body: 'x' }],
      ['GET', `/messages/${other.message_ids[0]}`],
      ['GET', `/deals/${other.deal_ids[0]}`],
      ['PATCH', `/deals/${other.deal_ids[0]}`, { name: 'x' }],
      ['GET', `/orders/${other.order_ids[0]}`],
      ['PATCH', `/orders/${other.order_ids[0]}/status`, { status: 'confirmed' }],
      ['GET', `/products/${other.products[0]!.id}`],
      ['PATCH', `/tasks/${other.task_ids[0]}`, { status: 'done' }],
    ];
    for (const [method, path, body] of checks) {
      expect([method, path, (await h.api(method, path, { body })).status]).toEqual([method, path, 404]);
    }
  });

  it('answers 422 when a body names a record of the other workspace', async () => {
    const c = other.contact_ids[0]!;
    expect((await h.api('POST', '/deals', { body: { name: 'x', contact_id: c } })).status).toBe(422);
    expect((await h.api('POST', '/orders', { body: { contact_id: c, items: [{ name: 'x', quantity: 1, unit_price: 1 }] } })).status).toBe(
      422,
    );
    expect((await h.api('POST', '/conversations', { body: { contact: c, channel_id: acme.channels[0]!.id } })).status).toBe(422);
    expect(
      (await h.api('POST', '/conversations', { body: { contact: acme.contact_ids[0], channel_id: other.channels[0]!.id } })).status,
    ).toBe(422);
    expect((await h.api('POST', '/leads', { body: { contact_id: c, name: 'x' } })).status).toBe(422);
    expect((await h.api('POST', '/contacts/merge', { body: { survivor: acme.contact_ids[0], loser: c } })).status).toBe(422);
  });

  it('lists only the own workspace, and the other token sees its own records', async () => {
    const mine = (await h.api('GET', '/contacts?per_page=100')).body.data.map((x: { id: number }) => x.id);
    expect(mine).not.toContain(other.contact_ids[0]);
    const theirs = await h.api('GET', '/contacts', { token: T.other });
    expect(theirs.body.data.map((x: { id: number }) => x.id)).toEqual(other.contact_ids);
    expect((await h.api('GET', `/contacts/${acme.contact_ids[0]}`, { token: T.other })).status).toBe(404);
    expect((await h.api('GET', `/orders/${other.order_ids[0]}`, { token: T.other })).status).toBe(200);
  });
});
