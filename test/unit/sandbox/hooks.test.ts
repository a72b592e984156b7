import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness } from '../../support/sandbox.js';

// The /_sandbox test hooks (docs/sandbox.md): request log, faults, reset, clock, tokens.
let h: Harness;
beforeAll(async () => {
  h = await start({ random: () => 0.5 });
});
afterAll(async () => {
  await h.close();
});

describe('request log', () => {
  it('records method, path, query, body, Idempotency-Key, token label and hash (never the token), status', async () => {
    await h.hook('DELETE', '/requests');
    await h.api('POST', '/contacts?x=1', { body: { name: 'Logged' }, headers: { 'Idempotency-Key': 'log-1' } });
    await h.api('GET', '/contacts', { token: T.read });
    await h.api('POST', '/contacts', { body: {} });
    const all = (await h.hook('GET', '/requests')).body.data;
    expect(all).toHaveLength(3);
    expect(all[0]).toMatchObject({
      method: 'POST',
      path: '/contacts',
      query: { x: '1' },
      body: { name: 'Logged' },
      idempotency_key: 'log-1',
      token: { label: 'full', hash: expect.stringMatching(/^[0-9a-f]{12}$/) },
      status: 201,
    });
    expect(Number.isNaN(Date.parse(all[0].time))).toBe(false);
    expect(JSON.stringify(all)).not.toContain(T.full);
    expect(JSON.stringify(all)).not.toContain(T.read);
  });

  it('filters by method, path glob, status and token; clears', async () => {
    expect((await h.hook('GET', '/requests?method=post&status=201')).body.data).toHaveLength(1);
    expect((await h.hook('GET', '/requests?path=/cont*&token=read-only')).body.data).toHaveLength(1);
    expect((await h.hook('GET', '/requests?status=422')).body.data[0].body).toEqual({});
    expect((await h.hook('DELETE', '/requests')).status).toBe(204);
    expect((await h.hook('GET', '/requests')).body.data).toEqual([]);
  });
});

describe('fault injection', () => {
  it('answers a share of calls with a plain 500 for chosen paths and methods', async () => {
    const rule = (await h.hook('POST', '/faults', { path: '/contacts*', method: 'GET', error_rate: 0.6 })).body.data;
    const r = await h.api('GET', '/contacts');
    expect([r.status, r.body]).toEqual([500, { message: 'Server Error' }]);
    expect((await h.api('POST', '/contacts', { body: { name: 'Fine' } })).status).toBe(201);
    expect((await h.api('GET', '/deals')).status).toBe(200);
    await h.hook('POST', '/faults', { path: '/deals', error_rate: 0.4 });
    expect((await h.api('GET', '/deals')).status).toBe(200);
    expect((await h.hook('GET', '/faults')).body.data).toHaveLength(2);
    expect((await h.hook('DELETE', `/faults/${rule.id}`)).status).toBe(204);
    expect((await h.api('GET', '/contacts')).status).toBe(200);
    await h.hook('DELETE', '/faults');
  });

  it('adds latency and forces token_expired', async () => {
    await h.hook('POST', '/faults', { path: '/me', latency_ms: 200, count: 1 });
    const t0 = Date.now();
    expect((await h.api('GET', '/me')).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    await h.hook('POST', '/faults', { path: '/me', token_expired: true, count: 1 });
    const r = await h.api('GET', '/me');
    expect([r.status, r.body.code]).toEqual([401, 'token_expired']);
    expect((await h.api('GET', '/me')).status).toBe(200);
  });
});

describe('reset, clock, tokens, workspaces', () => {
  it('resets to the seed', async () => {
    await h.api('POST', '/contacts', { body: { name: 'Temporary' } });
    expect((await h.api('GET', '/contacts?search=Temporary')).body.data).toHaveLength(1);
    const r = await h.hook('POST', '/reset');
    expect(r.body.data.tokens.map((t: { label: string }) => t.label)).toContain('full');
    expect((await h.api('GET', '/contacts?search=Temporary')).body.data).toHaveLength(0);
    expect((await h.api('GET', '/contacts')).body.data).toHaveLength(3);
  });

  it('re-seeds with extra records', async () => {
    await h.hook('POST', '/reset', { seed: { contacts: [{ name: 'Seeded Sam', labels: ['vip'] }] } });
    expect((await h.api('GET', '/contacts?label=vip')).body.data.map((c: { name: string }) => c.name)).toContain('Seeded Sam');
    expect((await h.hook('POST', '/reset', { seed: { contacts: [{}] } })).status).toBe(422);
  });

  it('sets and advances the clock', async () => {
    // The sandbox clock keeps running after a set, so allow the milliseconds the request took.
    const set = Date.parse((await h.hook('POST', '/clock', { set: '2031-05-05T00:00:00Z' })).body.data.now);
    expect(set - Date.parse('2031-05-05T00:00:00Z')).toBeGreaterThanOrEqual(0);
    expect(set - Date.parse('2031-05-05T00:00:00Z')).toBeLessThan(1_000);
    const r = await h.hook('POST', '/clock', { advance: '1d' });
    expect(r.body.data.now.startsWith('2031-05-06T00:00:00')).toBe(true);
    const c = (await h.api('POST', '/contacts', { body: { name: 'Future' } })).body.data;
    expect(c.created_at.startsWith('2031-05-06')).toBe(true);
    expect((await h.hook('POST', '/clock', { advance: 'soon' })).status).toBe(422);
  });

  it('lists tokens with labels and abilities, and the workspaces ids', async () => {
    const tokens = (await h.hook('GET', '/tokens')).body.data;
    expect(tokens.map((t: { label: string }) => t.label)).toEqual([
      'full',
      'read-only',
      'contacts-only',
      'no-view-phone',
      'expired',
      'expiring-1h',
      'legacy',
      'other-workspace-full',
    ]);
    const ws = (await h.hook('GET', '/workspaces')).body.data;
    expect(ws).toHaveLength(2);
    expect(ws[0].labels.map((l: { name: string }) => l.name)).toEqual(expect.arrayContaining(['customer', 'vip']));
    expect((await h.hook('GET', '')).body.data.length).toBeGreaterThan(10);
  });

  it('reads hook bodies like API bodies: empty is {}, unparseable JSON is 400', async () => {
    const post = (path: string, body: string) => fetch(`${h.server.url}/_sandbox${path}`, { method: 'POST', body });
    expect((await post('/clock', '')).status).toBe(200);
    for (const path of ['/faults', '/clock', '/burst', '/webhook', '/inbound']) {
      const r = await post(path, '{not json');
      expect([path, r.status]).toEqual([path, 400]);
      expect(await r.json()).toEqual({ message: 'The request body is not valid JSON.' });
    }
  });

  it('points deliveries only at absolute http(s) URLs: javascript:, ftp: and the like are 422', async () => {
    for (const url of ['javascript:alert(1)', 'ftp://files.example.com/hook', 'mailto:ops@example.com', 'http:/nohost']) {
      const r = await h.hook('POST', '/webhook', { url, secret: 's' });
      expect([url, r.status]).toEqual([url, 422]);
      expect(r.body.errors.url[0]).toMatch(/absolute http\(s\) URL/);
    }
    expect((await h.hook('GET', '/webhook')).body.data.url ?? '').not.toMatch(/^(javascript|ftp|mailto)/);
    expect((await h.hook('POST', '/webhook', { url: 'https://hooks.example.com/in', secret: 's' })).status).toBe(200);
    expect((await h.hook('POST', '/webhook', { url: null })).status).toBe(200);
  });

  it('needs no token and is not rate limited or logged', async () => {
    await h.hook('DELETE', '/requests');
    const r = await h.hook('GET', '/tokens');
    expect([r.status, r.headers.get('X-RateLimit-Limit')]).toEqual([200, null]);
    expect((await h.hook('GET', '/requests')).body.data).toEqual([]);
  });
});
