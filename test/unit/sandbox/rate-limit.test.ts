import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness } from '../../support/sandbox.js';

// Spec: Limits (burst per token per 10 s, monthly quota, headers on every response, 429 + Retry-After).
let h: Harness;
beforeAll(async () => {
  h = await start({ burst: 5 });
});
afterAll(async () => {
  await h.close();
});

describe('burst', () => {
  it('counts per token, answers 429 with Retry-After in seconds, and sends the headers on every response', async () => {
    const seen: [number, string | null, string | null][] = [];
    for (let i = 0; i < 6; i++) {
      const r = await h.api('GET', '/me', { token: T.read });
      seen.push([r.status, r.headers.get('X-RateLimit-Limit'), r.headers.get('X-RateLimit-Remaining')]);
    }
    expect(seen).toEqual([
      [200, '5', '4'],
      [200, '5', '3'],
      [200, '5', '2'],
      [200, '5', '1'],
      [200, '5', '0'],
      [429, '5', '0'],
    ]);
    const refused = await h.api('GET', '/contacts', { token: T.read });
    expect(refused.status).toBe(429);
    const retry = Number(refused.headers.get('Retry-After'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(10);
    expect((await h.api('GET', '/me', { token: T.contacts })).status).toBe(200);
    const unauth = await h.api('GET', '/me', { token: null });
    expect([unauth.status, unauth.headers.get('X-RateLimit-Limit')]).toEqual([401, '5']);
  });

  it('frees the window after 10 seconds of the sandbox clock', async () => {
    for (let i = 0; i < 6; i++) await h.api('GET', '/me', { token: T.nophone });
    expect((await h.api('GET', '/me', { token: T.nophone })).status).toBe(429);
    await h.hook('POST', '/clock', { advance: '10s' });
    expect((await h.api('GET', '/me', { token: T.nophone })).status).toBe(200);
  });

  it('answers forced 429s from a fault rule', async () => {
    await h.hook('POST', '/faults', { path: '/deals*', force_429: true, count: 1 });
    const r = await h.api('GET', '/deals', { token: T.legacy });
    expect([r.status, r.headers.get('Retry-After')]).toEqual([429, '1']);
    expect((await h.api('GET', '/deals', { token: T.legacy })).status).toBe(200);
  });
});

describe('monthly quota', () => {
  it('sends no quota headers without a cap; with one, counts down and answers 429 until next month', async () => {
    expect((await h.api('GET', '/me', { token: T.full })).headers.get('X-Quota-Limit')).toBeNull();
    await h.hook('POST', '/clock', { set: '2030-03-15T12:00:00Z' });
    await h.hook('POST', '/quota', { limit: 2 });
    const a = await h.api('GET', '/me', { token: T.full });
    expect([a.headers.get('X-Quota-Limit'), a.headers.get('X-Quota-Remaining'), a.headers.get('X-Quota-Reset')]).toEqual([
      '2',
      '1',
      '2030-04-01T00:00:00.000Z',
    ]);
    await h.api('GET', '/me', { token: T.full });
    const over = await h.api('GET', '/me', { token: T.full });
    expect(over.status).toBe(429);
    const expected = (Date.parse('2030-04-01T00:00:00Z') - Date.parse('2030-03-15T12:00:00Z')) / 1000;
    expect(Number(over.headers.get('Retry-After'))).toBeGreaterThan(expected - 60);
    expect(Number(over.headers.get('Retry-After'))).toBeLessThanOrEqual(expected);
    await h.hook('POST', '/clock', { set: '2030-04-01T00:00:01Z' });
    const fresh = await h.api('GET', '/me', { token: T.full });
    expect([fresh.status, fresh.headers.get('X-Quota-Remaining')]).toEqual([200, '1']);
    await h.hook('POST', '/quota', { limit: null });
  });
});

describe('what a refused request counts', () => {
  it('a 429 quota_exceeded (or a forced 429) leaves X-RateLimit-Remaining where it was', async () => {
    await h.hook('POST', '/burst', { burst: 5 });
    await h.hook('POST', '/quota', { limit: 1 });
    const first = await h.api('GET', '/me', { token: T.full });
    expect([first.status, first.headers.get('X-RateLimit-Remaining')]).toEqual([200, '4']);
    for (let i = 0; i < 3; i++) {
      const over = await h.api('GET', '/me', { token: T.full });
      expect([over.status, over.body.code, over.headers.get('X-RateLimit-Remaining')]).toEqual([429, 'quota_exceeded', '4']);
    }
    await h.hook('POST', '/quota', { limit: null });
    await h.hook('POST', '/faults', { path: '/me', force_429: true, count: 1 });
    expect((await h.api('GET', '/me', { token: T.full })).headers.get('X-RateLimit-Remaining')).toBe('4');
    expect((await h.api('GET', '/me', { token: T.full })).headers.get('X-RateLimit-Remaining')).toBe('3');
  });
});
