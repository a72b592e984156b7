import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness } from '../../support/sandbox.js';

// Spec: Limits (idempotency memory 24 h, per workspace) and Errors (409 in flight, 422 other body).
let h: Harness;
beforeAll(async () => {
  h = await start();
});
afterAll(async () => {
  await h.close();
});

const create = (key: string, body: unknown, token: string | null = T.full) =>
  h.api('POST', '/contacts', { token, body, headers: { 'Idempotency-Key': key } });
const count = async (name: string): Promise<number> => (await h.api('GET', `/contacts?search=${name}`)).body.data.length;

describe('idempotency', () => {
  it('replays the first response with Idempotent-Replay: true and does the work once', async () => {
    const first = await create('k-replay', { name: 'Idem One' });
    expect(first.status).toBe(201);
    expect(first.headers.get('Idempotent-Replay')).toBeNull();
    const again = await create('k-replay', { name: 'Idem One' });
    expect([again.status, again.headers.get('Idempotent-Replay')]).toEqual([201, 'true']);
    expect(again.body).toEqual(first.body);
    expect(await count('Idem One')).toBe(1);
  });

  it('treats key order and whitespace as the same body', async () => {
    await create('k-order', { name: 'Idem Two', email: 'idem2@example.com' });
    const again = await h.api('POST', '/contacts', {
      body: '{ "email": "idem2@example.com",  "name": "Idem Two" }',
      headers: { 'Idempotency-Key': 'k-order' },
    });
    expect(again.headers.get('Idempotent-Replay')).toBe('true');
  });

  it('answers 422 for the same key with a different body, or on another path', async () => {
    await create('k-diff', { name: 'Idem Three' });
    const r = await create('k-diff', { name: 'Something else' });
    expect(r.status).toBe(422);
    expect(r.body.errors).toHaveProperty('Idempotency-Key');
    expect((await h.api('POST', '/deals', { body: { name: 'Idem Three' }, headers: { 'Idempotency-Key': 'k-diff' } })).status).toBe(422);
  });

  it('does not remember a failed request: the key can be reused after fixing the body', async () => {
    const bad = await create('k-fix', { name: '' });
    expect(bad.status).toBe(422);
    const good = await create('k-fix', { name: 'Idem Fixed' });
    expect([good.status, good.headers.get('Idempotent-Replay')]).toEqual([201, null]);
  });

  it('answers 409 to a concurrent request with the same key while the first is in flight', async () => {
    await h.hook('POST', '/faults', { path: '/contacts', method: 'POST', latency_ms: 300, count: 1 });
    const [a, b] = await Promise.all([
      create('k-flight', { name: 'Idem Flight' }),
      new Promise((r) => setTimeout(r, 80)).then(() => create('k-flight', { name: 'Idem Flight' })),
    ]);
    expect([a.status, b.status]).toEqual([201, 409]);
    expect((await create('k-flight', { name: 'Idem Flight' })).headers.get('Idempotent-Replay')).toBe('true');
    expect(await count('Idem Flight')).toBe(1);
  });

  it('forgets keys after 24 hours of the sandbox clock', async () => {
    await create('k-ttl', { name: 'Idem Ttl' });
    await h.hook('POST', '/clock', { advance: '23h' });
    expect((await create('k-ttl', { name: 'Idem Ttl' })).headers.get('Idempotent-Replay')).toBe('true');
    await h.hook('POST', '/clock', { advance: '1h' });
    const later = await create('k-ttl', { name: 'Idem Ttl' });
    expect([later.status, later.headers.get('Idempotent-Replay')]).toEqual([201, null]);
    expect(await count('Idem Ttl')).toBe(2);
  });

  it('scopes keys to the workspace', async () => {
    await create('k-scope', { name: 'Idem Scope' });
    const other = await create('k-scope', { name: 'Idem Scope' }, T.other);
    expect([other.status, other.headers.get('Idempotent-Replay')]).toEqual([201, null]);
  });

  it('applies to PATCH and status moves; reads and non-IK calls ignore the header', async () => {
    const c = (await create('k-p0', { name: 'Idem Patch' })).body.data;
    const p1 = await h.api('PATCH', `/contacts/${c.id}`, { body: { name: 'Idem Patched' }, headers: { 'Idempotency-Key': 'k-p1' } });
    const p2 = await h.api('PATCH', `/contacts/${c.id}`, { body: { name: 'Idem Patched' }, headers: { 'Idempotency-Key': 'k-p1' } });
    expect([p1.headers.get('Idempotent-Replay'), p2.headers.get('Idempotent-Replay')]).toEqual([null, 'true']);
    const g = await h.api('GET', '/contacts', { headers: { 'Idempotency-Key': 'k-p1' } });
    expect([g.status, g.headers.get('Idempotent-Replay')]).toEqual([200, null]);
    const d1 = await h.api('DELETE', `/contacts/${c.id}/labels/vip`, { headers: { 'Idempotency-Key': 'k-p1' } });
    expect(d1.status).toBe(200);
  });
});

describe('idempotency comes after the checks of the call', () => {
  const alice = async (): Promise<{ id: number; phone: string }> => (await h.api('GET', '/contacts?email=alice@example.com')).body.data[0];

  it('never replays to a caller without the ability: 403, not the first answer', async () => {
    const body = { name: 'Idem Guarded', phone: '+20 100 555 0101' };
    expect((await create('k-guard', body)).status).toBe(201);
    const r = await create('k-guard', body, T.read);
    expect([r.status, r.body.code, r.headers.get('Idempotent-Replay')]).toEqual([403, 'missing_ability', null]);
    expect(JSON.stringify(r.body)).not.toContain('555');
    expect((await create('k-guard', body, null)).status).toBe(401);
  });

  it('never replays a phone write to a teammate without view-phone: 403', async () => {
    const body = { name: 'Idem Phone', phone: '+20 100 555 0102' };
    expect((await create('k-phone', body)).status).toBe(201);
    const r = await create('k-phone', body, T.nophone);
    expect([r.status, r.body.code, r.headers.get('Idempotent-Replay')]).toEqual([403, 'missing_permission', null]);
    expect(await count('Idem Phone')).toBe(1);
  });

  it('masks the replayed answer for a replaying teammate without view-phone, and unmasks it for one with it', async () => {
    const { id, phone } = await alice();
    const patch = (key: string, token: string) =>
      h.api('PATCH', `/contacts/${id}`, { token, body: { name: 'Alice Adams' }, headers: { 'Idempotency-Key': key } });
    const first = await patch('k-mask', T.full);
    expect(first.body.data.phone).toBe(phone);
    const replay = await patch('k-mask', T.nophone);
    expect([replay.status, replay.headers.get('Idempotent-Replay')]).toEqual([200, 'true']);
    expect(replay.body.data.phone).toMatch(/^[^0-9]*(\*[^0-9]*)+4567$/);
    expect(replay.body.data.phone).not.toBe(phone);
    const masked = await patch('k-mask-2', T.nophone);
    expect(masked.body.data.phone).not.toBe(phone);
    const unmasked = await patch('k-mask-2', T.full);
    expect([unmasked.headers.get('Idempotent-Replay'), unmasked.body.data.phone]).toEqual(['true', phone]);
  });

  it('never replays a phone: address to a teammate without view-phone: 403', async () => {
    const move = (token: string) =>
      h.api('PUT', `/contacts/${encodeURIComponent('phone:+201001234567')}/lifecycle`, {
        token,
        body: { stage: 'Qualified' },
        headers: { 'Idempotency-Key': 'k-phone-address' },
      });
    expect((await move(T.full)).status).toBe(200);
    const r = await move(T.nophone);
    expect([r.status, r.body.code, r.headers.get('Idempotent-Replay')]).toEqual([403, 'missing_permission', null]);
  });

  it('refuses a caller without the ability before telling it a key is in flight', async () => {
    await h.hook('POST', '/faults', { path: '/contacts', method: 'POST', latency_ms: 300, count: 1 });
    const [a, b] = await Promise.all([
      create('k-flight-guard', { name: 'Idem Flight Guard' }),
      new Promise((r) => setTimeout(r, 80)).then(() => create('k-flight-guard', { name: 'Idem Flight Guard' }, T.read)),
    ]);
    expect([a.status, b.status]).toEqual([201, 403]);
  });
});
