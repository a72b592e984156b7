import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness, type World } from '../../support/sandbox.js';

// Spec: POST /contacts/merge.
let h: Harness;
let acme: World;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
});

describe('merge', () => {
  it('answers 422 when a side is missing (no default survivor)', async () => {
    const r = await h.api('POST', '/contacts/merge', { body: { survivor: acme.contact_ids[0] } });
    expect(r.status).toBe(422);
    expect(r.body.errors).toHaveProperty('loser');
    expect((await h.api('POST', '/contacts/merge', { body: { loser: acme.contact_ids[0] } })).body.errors).toHaveProperty('survivor');
  });

  it('needs contacts:delete', async () => {
    const r = await h.api('POST', '/contacts/merge', { token: T.read, body: { survivor: 1, loser: 2 } });
    expect(r.status).toBe(403);
  });

  it('moves conversations, deals and labels to the survivor, fills gaps, keeps the survivor values, removes the loser', async () => {
    const survivor = (await h.api('POST', '/contacts', { body: { name: 'Keep Me', email: 'keep@example.com' } })).body.data;
    const loser = (await h.api('POST', '/contacts', { body: { name: 'Drop Me', email: 'drop@example.com', phone: '+15550001111' } })).body
      .data;
    await h.api('POST', `/contacts/${loser.id}/labels`, { body: { labels: ['vip'] } });
    const conv = (await h.api('POST', '/conversations', { body: { contact: loser.id, channel_id: acme.channels[0]!.id } })).body.data;
    const deal = (await h.api('POST', '/deals', { body: { name: 'D', contact_id: loser.id } })).body.data;
    const r = await h.api('POST', '/contacts/merge', {
      token: T.contacts,
      body: { survivor: `id:${survivor.id}`, loser: 'email:drop@example.com' },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: survivor.id, name: 'Keep Me', email: 'keep@example.com', phone: '+15550001111' });
    expect((await h.api('GET', `/contacts/${loser.id}`)).status).toBe(404);
    expect((await h.api('GET', `/conversations/${conv.id}`)).body.data.contact_id).toBe(survivor.id);
    expect((await h.api('GET', `/deals/${deal.id}`)).body.data.contact_ids).toEqual([survivor.id]);
    expect((await h.api('GET', `/contacts/${survivor.id}/labels`)).body.data.map((l: { name: string }) => l.name)).toEqual(['vip']);
  });

  it('answers 422 for a side that names no contact, or the same contact twice', async () => {
    expect((await h.api('POST', '/contacts/merge', { body: { survivor: acme.contact_ids[0], loser: 999999 } })).status).toBe(422);
    expect((await h.api('POST', '/contacts/merge', { body: { survivor: acme.contact_ids[0], loser: acme.contact_ids[0] } })).status).toBe(
      422,
    );
  });
});
