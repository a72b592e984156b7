import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness, type World } from '../../support/sandbox.js';

// Spec: Contacts (CRUD, addressing, list filters, view-phone permission, limits).
let h: Harness;
let acme: World;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
});

describe('create and validation', () => {
  it('creates a contact on the default stage with 201', async () => {
    const r = await h.api('POST', '/contacts', { body: { name: 'Dana', email: 'dana@example.com', phone: '+1 555 0100 200' } });
    expect(r.status).toBe(201);
    const def = acme.lifecycle_stages.find((s) => s.role === 'default')!;
    expect(r.body.data).toMatchObject({ name: 'Dana', email: 'dana@example.com', lifecycle_stage_id: def.id, blocked: false });
    expect(r.body.data.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('answers 422 with an errors map naming each bad field', async () => {
    const r = await h.api('POST', '/contacts', { body: { email: 'not-an-email', phone: '1'.repeat(33) } });
    expect(r.status).toBe(422);
    expect(typeof r.body.message).toBe('string');
    expect(Object.keys(r.body.errors).sort()).toEqual(['email', 'name', 'phone']);
    expect(r.body.errors.name[0]).toEqual(expect.any(String));
  });

  it('enforces the name limit of 255 and accepts exactly 255', async () => {
    expect((await h.api('POST', '/contacts', { body: { name: 'n'.repeat(256) } })).body.errors).toHaveProperty('name');
    expect((await h.api('POST', '/contacts', { body: { name: 'n'.repeat(255) } })).status).toBe(201);
  });

  it('refuses an unknown lifecycle stage (422)', async () => {
    expect((await h.api('POST', '/contacts', { body: { name: 'S', lifecycle_stage_id: 999999 } })).body.errors).toHaveProperty(
      'lifecycle_stage_id',
    );
  });

  it('reads lifecycle_stage_id null (the spec types it int or null) as the default stage; the lifecycle is never removed', async () => {
    const def = acme.lifecycle_stages.find((s) => s.role === 'default')!;
    const won = acme.lifecycle_stages.find((s) => s.outcome === 'won')!;
    const created = await h.api('POST', '/contacts', { body: { name: 'Nulla', lifecycle_stage_id: null } });
    expect([created.status, created.body.data.lifecycle_stage_id]).toEqual([201, def.id]);
    const put = await h.api('PUT', '/contacts/email:nulla@example.com', { body: { name: 'Nulla', lifecycle_stage_id: null } });
    expect([put.status, put.body.data.lifecycle_stage_id]).toEqual([201, def.id]);
    const id = created.body.data.id;
    expect((await h.api('PATCH', `/contacts/${id}`, { body: { lifecycle_stage_id: won.id } })).body.data.lifecycle_stage_id).toBe(won.id);
    const back = await h.api('PATCH', `/contacts/${id}`, { body: { lifecycle_stage_id: null } });
    expect([back.status, back.body.data.lifecycle_stage_id]).toEqual([200, def.id]);
  });

  it('answers 400 for a body that is not JSON', async () => {
    expect((await h.api('POST', '/contacts', { body: '{nope' })).status).toBe(400);
  });
});

describe('addressing', () => {
  it('finds a contact by bare id, id:, email: (case-insensitive) and phone: (last nine digits)', async () => {
    const alice = (await h.api('GET', '/contacts?email=alice@example.com')).body.data[0];
    for (const addr of [String(alice.id), `id:${alice.id}`, 'email:ALICE@example.com', 'phone:00201001234567', 'phone:1001234567']) {
      const r = await h.api('GET', `/contacts/${encodeURIComponent(addr)}`);
      expect([addr, r.status, r.body.data?.id]).toEqual([addr, 200, alice.id]);
    }
  });

  it('answers 404 for unknown ids, addresses and prefixes', async () => {
    for (const addr of ['999999', 'id:999999', 'email:nobody@example.com', 'foo:bar']) {
      expect((await h.api('GET', `/contacts/${encodeURIComponent(addr)}`)).status).toBe(404);
    }
  });

  it('PATCH changes only the fields sent', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'Eve', email: 'eve@example.com' } })).body.data;
    const r = await h.api('PATCH', `/contacts/id:${c.id}`, { body: { name: 'Eve Evans' } });
    expect(r.body.data).toMatchObject({ name: 'Eve Evans', email: 'eve@example.com' });
  });

  it('PUT creates at an email address (201), then updates (200); id: never creates (404)', async () => {
    const created = await h.api('PUT', '/contacts/email:frank@example.com', { body: { name: 'Frank' } });
    expect(created.status).toBe(201);
    expect(created.body.data.email).toBe('frank@example.com');
    const updated = await h.api('PUT', '/contacts/email:frank@example.com', { body: { name: 'Frank F' } });
    expect([updated.status, updated.body.data.id, updated.body.data.name]).toEqual([200, created.body.data.id, 'Frank F']);
    expect((await h.api('PUT', '/contacts/id:999999', { body: { name: 'Ghost' } })).status).toBe(404);
    expect((await h.api('PUT', '/contacts/email:nameless@example.com', { body: {} })).body.errors).toHaveProperty('name');
  });

  it('PUT is idempotent: a body that would move the contact off its address is 422, never a new contact per call', async () => {
    const count = async (email: string) => (await h.api('GET', `/contacts?email=${email}`)).body.data.length;
    for (let i = 0; i < 2; i++) {
      const r = await h.api('PUT', '/contacts/email:hana@example.com', { body: { name: 'Hana', email: 'other@example.com' } });
      expect(r.status).toBe(422);
      expect(r.body.errors).toHaveProperty('email');
    }
    expect([await count('hana@example.com'), await count('other@example.com')]).toEqual([0, 0]);
    const first = await h.api('PUT', '/contacts/email:hana@example.com', { body: { name: 'Hana', email: 'HANA@example.com' } });
    const second = await h.api('PUT', '/contacts/email:hana@example.com', { body: { name: 'Hana', email: 'HANA@example.com' } });
    expect([first.status, second.status, second.body.data.id]).toEqual([201, 200, first.body.data.id]);
    expect((await h.api('PUT', '/contacts/email:hana@example.com', { body: { email: null } })).body.errors).toHaveProperty('email');
    const phone = await h.api('PUT', '/contacts/phone:+201009998887', { body: { name: 'Ivo', phone: '+201001112223' } });
    expect([phone.status, Object.keys(phone.body.errors ?? {})]).toEqual([422, ['phone']]);
    expect((await h.api('PUT', '/contacts/phone:+201009998887', { body: { name: 'Ivo', phone: '01009998887' } })).status).toBe(201);
    expect((await h.api('PUT', '/contacts/phone:+201009998887', { body: { name: 'Ivo' } })).status).toBe(200);
  });

  it('DELETE answers 204 with no body, needs contacts:delete, and the conversations stay', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'Gone', email: 'gone@example.com' } })).body.data;
    const conv = (await h.api('POST', '/conversations', { body: { contact: c.id, channel_id: acme.channels[0]!.id } })).body.data;
    expect((await h.api('DELETE', `/contacts/${c.id}`, { token: T.read })).status).toBe(403);
    const del = await h.api('DELETE', `/contacts/${c.id}`, { token: T.contacts });
    expect([del.status, del.body]).toEqual([204, null]);
    expect((await h.api('GET', `/contacts/${c.id}`)).status).toBe(404);
    expect((await h.api('GET', `/conversations/${conv.id}`)).status).toBe(200);
  });
});

describe('view-phone permission', () => {
  it('masks phone numbers for a teammate without the permission', async () => {
    const r = await h.api('GET', '/contacts/email:alice@example.com', { token: T.nophone });
    expect(r.body.data.phone).not.toBe('+201001234567');
    expect(r.body.data.phone).toMatch(/4567$/);
    expect(r.body.data.phone).toContain('*');
  });

  it('answers 403 to the phone filter, phone addressing and writing a phone', async () => {
    expect((await h.api('GET', '/contacts?phone=1001234567', { token: T.nophone })).status).toBe(403);
    expect((await h.api('GET', '/contacts/phone:1001234567', { token: T.nophone })).status).toBe(403);
    expect((await h.api('POST', '/contacts', { token: T.nophone, body: { name: 'P', phone: '+1 555' } })).status).toBe(403);
    const id = acme.contact_ids[0];
    expect((await h.api('PATCH', `/contacts/${id}`, { token: T.nophone, body: { phone: '+1 555' } })).status).toBe(403);
    expect((await h.api('POST', '/contacts', { token: T.nophone, body: { name: 'No phone' } })).status).toBe(201);
  });

  it('search matches phone digits only when the teammate may see phone numbers', async () => {
    const full = await h.api('GET', '/contacts?search=1001234567');
    expect(full.body.data.map((c: { email: string }) => c.email)).toContain('alice@example.com');
    expect((await h.api('GET', '/contacts?search=1001234567', { token: T.nophone })).body.data).toEqual([]);
  });
});

describe('list filters', () => {
  it('filters by email, phone, label (id or name), lifecycle stage', async () => {
    expect((await h.api('GET', '/contacts?email=CAROL@example.com')).body.data).toHaveLength(1);
    expect((await h.api('GET', '/contacts?phone=(0)7700-900123')).body.data[0].name).toBe('Bob Brown');
    const vip = acme.labels.find((l) => l.name === 'vip')!;
    const byName = (await h.api('GET', '/contacts?label=vip')).body.data.map((c: { id: number }) => c.id);
    const byId = (await h.api('GET', `/contacts?label=${vip.id}`)).body.data.map((c: { id: number }) => c.id);
    expect(byName).toEqual(byId);
    expect(byName.length).toBeGreaterThan(0);
    expect((await h.api('GET', '/contacts?label=nope')).status).toBe(422);
    const won = acme.lifecycle_stages.find((s) => s.outcome === 'won')!;
    const onWon = (await h.api('GET', `/contacts?lifecycle_stage_id=${won.id}`)).body.data;
    expect(onWon.every((c: { lifecycle_stage_id: number }) => c.lifecycle_stage_id === won.id)).toBe(true);
  });

  it('filters by creation bounds (inclusive) and updated_after, every filter must match', async () => {
    const all = (await h.api('GET', '/contacts?per_page=100')).body.data as { id: number; created_at: string; updated_at: string }[];
    const pivot = all[all.length - 1]!;
    const after = (await h.api('GET', `/contacts?per_page=100&created_after=${encodeURIComponent(pivot.created_at)}`)).body.data;
    expect(after).toHaveLength(all.length);
    const before = (await h.api('GET', `/contacts?created_before=${encodeURIComponent(pivot.created_at)}`)).body.data;
    expect(before.map((c: { id: number }) => c.id)).toContain(pivot.id);
    const both = (await h.api('GET', `/contacts?created_before=${encodeURIComponent(pivot.created_at)}&email=nobody@x.org`)).body.data;
    expect(both).toEqual([]);
    const c = (await h.api('POST', '/contacts', { body: { name: 'Poll' } })).body.data;
    const polled = (await h.api('GET', `/contacts?updated_after=${encodeURIComponent(c.updated_at)}`)).body.data;
    expect(polled.map((x: { id: number }) => x.id)).toContain(c.id);
    expect((await h.api('GET', '/contacts?created_after=yesterday')).status).toBe(422);
  });

  it('adds labels and lifecycle blocks with include, ignoring unknown names', async () => {
    const r = await h.api('GET', '/contacts/email:carol@example.com?include=labels,lifecycle,bogus');
    expect(r.body.data.labels.map((l: { name: string }) => l.name).sort()).toEqual(['customer', 'vip']);
    expect(r.body.data.lifecycle).toMatchObject({ name: 'Customer', outcome: 'won' });
    expect(r.body.data).not.toHaveProperty('bogus');
  });
});

describe('PUT at an email: or phone: address', () => {
  it('checks the address as POST /contacts checks that field: 422, and nothing is created', async () => {
    const before = (await h.api('GET', '/contacts?per_page=100')).body.data.length;
    const email = await h.api('PUT', '/contacts/email:notanemail', { body: { name: 'Nope' } });
    expect([email.status, email.body.errors.email[0]]).toEqual([422, 'must be a valid email address (the address email:notanemail)']);
    for (const phone of ['1'.repeat(40), 'abc']) {
      const r = await h.api('PUT', `/contacts/phone:${phone}`, { body: { name: 'Nope' } });
      expect([r.status, Object.keys(r.body.errors)]).toEqual([422, ['phone']]);
      expect((await h.api('POST', '/contacts', { body: { name: 'Nope', phone } })).body.errors).toHaveProperty('phone');
    }
    expect((await h.api('GET', '/contacts?per_page=100')).body.data.length).toBe(before);
    expect((await h.api('PUT', '/contacts/phone:+44 20 7946 0999', { body: { name: 'Yes' } })).status).toBe(201);
  });
});
