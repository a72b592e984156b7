import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../../../src/sandbox/index.js';
import { start, T, type Harness } from '../../../support/sandbox.js';

// Spec: Authentication 1-12, Errors (400, 401, 403, 500).
let h: Harness;
beforeAll(async () => {
  h = await start();
});
afterAll(async () => {
  await h.close();
});

describe('authentication', () => {
  it('answers 401 without a token or with an unknown one', async () => {
    expect((await h.api('GET', '/me', { token: null })).status).toBe(401);
    const r = await h.api('GET', '/me', { token: 'nope' });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ message: expect.any(String) });
  });

  it('refuses a token or api_token query parameter with 400, even with a good header', async () => {
    expect((await h.api('GET', `/me?token=${T.full}`)).status).toBe(400);
    expect((await h.api('GET', `/contacts?api_token=${T.full}`)).status).toBe(400);
  });

  it('answers 401 token_expired for a token past its date', async () => {
    const r = await h.api('GET', '/me', { token: T.expired });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('token_expired');
  });

  it('expires a token when the clock passes its date', async () => {
    expect((await h.api('GET', '/me', { token: T.expiring })).status).toBe(200);
    await h.hook('POST', '/clock', { advance: '2h' });
    const r = await h.api('GET', '/me', { token: T.expiring });
    expect([r.status, r.body.code]).toEqual([401, 'token_expired']);
    await h.hook('POST', '/clock', { advance_ms: -2 * 3600_000 });
    expect((await h.api('GET', '/me', { token: T.expiring })).status).toBe(200);
  });

  it('keeps legacy keys working until retirement is switched on, then 403 legacy_key_retired', async () => {
    expect((await h.api('GET', '/contacts', { token: T.legacy })).status).toBe(200);
    await h.hook('POST', '/legacy-retirement', { retired: true });
    const r = await h.api('GET', '/contacts', { token: T.legacy });
    expect([r.status, r.body.code]).toEqual([403, 'legacy_key_retired']);
    expect((await h.api('GET', '/contacts')).status).toBe(200);
    await h.hook('POST', '/legacy-retirement', { retired: false });
    expect((await h.api('GET', '/contacts', { token: T.legacy })).status).toBe(200);
  });

  it('answers GET /me with the token abilities, for any valid token', async () => {
    const r = await h.api('GET', '/me', { token: T.contacts });
    expect(r.status).toBe(200);
    expect(r.body.data.abilities).toEqual(['contacts:read', 'contacts:write', 'contacts:delete']);
    expect(r.body.data).toMatchObject({
      user: { id: expect.any(Number) },
      company: { id: expect.any(Number) },
      account: { id: expect.any(Number) },
    });
  });
});

describe('abilities', () => {
  it.each([
    ['read-only token writing a contact', T.read, 'POST', '/contacts', { name: 'X' }],
    ['read-only token deleting', T.read, 'DELETE', '/contacts/1', undefined],
    ['contacts-only token reading conversations', T.contacts, 'GET', '/conversations', undefined],
    ['contacts-only token reading orders', T.contacts, 'GET', '/orders', undefined],
    ['contacts-only token reading products', T.contacts, 'GET', '/products', undefined],
    ['contacts-only token reading tasks', T.contacts, 'GET', '/tasks', undefined],
    ['contacts-only token reading deals', T.contacts, 'GET', '/deals', undefined],
    ['contacts-only token reading leads', T.contacts, 'GET', '/leads', undefined],
    ['read-only token placing an order', T.read, 'POST', '/orders', { contact_id: 1, items: [] }],
    ['read-only token merging', T.read, 'POST', '/contacts/merge', { survivor: 1, loser: 2 }],
  ])('403 for %s', async (_name, token, method, path, body) => {
    const r = await h.api(method, path, { token, body });
    expect(r.status).toBe(403);
    expect(typeof r.body.message).toBe('string');
  });

  it('lets the read-only token read', async () => {
    for (const p of ['/contacts', '/conversations', '/deals', '/orders', '/products', '/tasks', '/leads']) {
      expect((await h.api('GET', p, { token: T.read })).status, p).toBe(200);
    }
  });
});

describe('TLS and unexpected failures', () => {
  it('does not simulate the HTTPS rule by default, and does with requireTls', async () => {
    expect((await h.api('GET', '/me')).status).toBe(200);
    const strict = await start({ requireTls: true });
    try {
      expect((await strict.api('GET', '/me')).status).toBe(403);
      expect((await strict.api('GET', '/me', { headers: { 'X-Forwarded-Proto': 'https' } })).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('answers an unexpected failure with a plain 500 and no internals', async () => {
    const sb = createSandbox();
    sb.app.get('/api/v1/boom', () => {
      throw new Error('secret stack detail');
    });
    const server = await sb.listen(0);
    try {
      const res = await fetch(`${server.baseUrl}/boom`, { headers: { Authorization: `Bearer ${T.full}` } });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ message: 'Server Error' });
      expect(text).not.toContain('secret');
    } finally {
      await server.close();
    }
  });
});
