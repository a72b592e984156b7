import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness, type World } from '../../support/sandbox.js';

// Spec: Conversations, Conversation status.
let h: Harness;
let acme: World;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
});

async function freshThread(): Promise<{ id: number; contact_id: number }> {
  const c = (await h.api('POST', '/contacts', { body: { name: 'Thread owner' } })).body.data;
  return (await h.api('POST', '/conversations', { body: { contact: c.id, channel_id: acme.channels[0]!.id } })).body.data;
}

describe('opening', () => {
  it('answers 201 for a new thread and 200 with the same live thread afterwards', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'Opener', email: 'opener@example.com' } })).body.data;
    const channel = acme.channels[0]!;
    const first = await h.api('POST', '/conversations', { body: { contact: 'email:opener@example.com', channel_id: channel.id } });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({
      contact_id: c.id,
      status: 'open',
      channel: { id: channel.id, name: channel.name, type: channel.type },
      assignee: null,
      closed_at: null,
    });
    const second = await h.api('POST', '/conversations', { body: { contact: c.id, channel_id: channel.id } });
    expect([second.status, second.body.data.id]).toEqual([200, first.body.data.id]);
    const other = await h.api('POST', '/conversations', { body: { contact: c.id, channel_id: acme.channels[1]!.id } });
    expect(other.status).toBe(201);
    await h.api('PATCH', `/conversations/${first.body.data.id}`, { body: { status: 'closed' } });
    const third = await h.api('POST', '/conversations', { body: { contact: c.id, channel_id: channel.id } });
    expect(third.status).toBe(201);
    expect(third.body.data.id).not.toBe(first.body.data.id);
  });

  it('answers 422 for an unknown contact or channel, 403 without conversations:write', async () => {
    expect(
      (await h.api('POST', '/conversations', { body: { contact: 'email:none@x.org', channel_id: acme.channels[0]!.id } })).body.errors,
    ).toHaveProperty('contact');
    expect(
      (await h.api('POST', '/conversations', { body: { contact: acme.contact_ids[0], channel_id: 999999 } })).body.errors,
    ).toHaveProperty('channel_id');
    expect((await h.api('POST', '/conversations', { body: {} })).status).toBe(422);
    expect(
      (await h.api('POST', '/conversations', { token: T.read, body: { contact: acme.contact_ids[0], channel_id: acme.channels[0]!.id } }))
        .status,
    ).toBe(403);
  });
});

describe('status changes', () => {
  it('needs snoozed_until with snoozed, in the future', async () => {
    const cv = await freshThread();
    expect((await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'snoozed' } })).body.errors).toHaveProperty('snoozed_until');
    const past = new Date(Date.now() - 60_000).toISOString();
    expect(
      (await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'snoozed', snoozed_until: past } })).body.errors,
    ).toHaveProperty('snoozed_until');
    const future = new Date(Date.now() + 3600_000).toISOString();
    const ok = await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'snoozed', snoozed_until: future } });
    expect([ok.status, ok.body.data.status]).toEqual([200, 'snoozed']);
  });

  it('closes with a category from the closing notes only', async () => {
    const notes = await h.api('GET', '/closing-notes', { token: T.read });
    expect(notes.body.data.map((n: { category: string }) => n.category)).toEqual(['Resolved', 'Spam', 'No reply']);
    const cv = await freshThread();
    expect(
      (await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'closed', category: 'Made up' } })).body.errors,
    ).toHaveProperty('category');
    const r = await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'closed', category: 'Spam' } });
    expect(r.body.data.status).toBe('closed');
    expect(r.body.data.closed_at).not.toBeNull();
    const reopened = await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'pending' } });
    expect([reopened.body.data.status, reopened.body.data.closed_at]).toEqual(['pending', null]);
  });

  it('refuses reopening a closed thread while another live one exists for the contact and channel', async () => {
    const cv = await freshThread();
    await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'closed' } });
    await h.api('POST', '/conversations', { body: { contact: cv.contact_id, channel_id: acme.channels[0]!.id } });
    expect((await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'open' } })).status).toBe(422);
  });

  it('assigns to an active teammate or ai, unassigns with null, refuses an inactive teammate', async () => {
    const cv = await freshThread();
    const [active, , inactive] = acme.teammates;
    expect(
      (await h.api('PATCH', `/conversations/${cv.id}`, { body: { assignee: { type: 'user', id: active!.id } } })).body.data.assignee,
    ).toEqual({ type: 'user', id: active!.id });
    expect((await h.api('PATCH', `/conversations/${cv.id}`, { body: { assignee: { type: 'user', id: inactive!.id } } })).status).toBe(422);
    expect((await h.api('PATCH', `/conversations/${cv.id}`, { body: { assignee: null } })).body.data.assignee).toBeNull();
    expect((await h.api('PATCH', `/conversations/${cv.id}`, { body: { summary: 's'.repeat(2001) } })).body.errors).toHaveProperty(
      'summary',
    );
    expect((await h.api('PATCH', `/conversations/${cv.id}`, { body: { priority: 'urgent' } })).status).toBe(422);
  });

  it('lists with status, contact_id and channel_id filters', async () => {
    const cv = await freshThread();
    const byContact = (await h.api('GET', `/conversations?contact_id=${cv.contact_id}`)).body.data;
    expect(byContact.map((x: { id: number }) => x.id)).toEqual([cv.id]);
    const closed = (await h.api('GET', '/conversations?status=closed')).body.data;
    expect(closed.length).toBeGreaterThan(0);
    expect(closed.every((x: { status: string }) => x.status === 'closed')).toBe(true);
    const ch = acme.channels[1]!.id;
    expect(
      (await h.api('GET', `/conversations?channel_id=${ch}`)).body.data.every((x: { channel: { id: number } }) => x.channel.id === ch),
    ).toBe(true);
    expect((await h.api('GET', '/conversations?status=bogus')).status).toBe(422);
  });

  it('answers 404 for an unknown conversation', async () => {
    expect((await h.api('GET', '/conversations/999999')).status).toBe(404);
    expect((await h.api('PATCH', '/conversations/999999', { body: { status: 'open' } })).status).toBe(404);
  });
});
