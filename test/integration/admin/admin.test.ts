import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdmin } from '../../../src/admin/index.js';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const admin = { user: 'ops', password: 'pw-3f9c1a7e-not-in-any-page' };
const basic = (user: string, password: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

describe('admin dashboard (bull-board behind basic auth)', () => {
  const prefix = uniquePrefix('admin');
  let redis: Redis;
  let queues: Queue[];
  let app: Hono;

  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    queues = [new Queue(EVENTS_QUEUE, { connection: redis, prefix }), new Queue(HANDLERS_QUEUE, { connection: redis, prefix })];
    app = new Hono();
    expect(mountAdmin(app, { queues, admin })).toBe(true);
  });
  afterAll(async () => {
    await Promise.allSettled(queues.map((q) => q.close()));
    redis.disconnect();
  });

  it('is absent (404) when no credentials are configured', async () => {
    const off = new Hono();
    expect(mountAdmin(off, { queues, admin: undefined })).toBe(false);
    for (const path of ['/admin', '/admin/', '/admin/api/queues', '/admin/static/favicon-32x32.png']) {
      expect((await off.request(path)).status, path).toBe(404);
      expect((await off.request(path, { headers: basic(admin.user, admin.password) })).status, path).toBe(404);
    }
  });

  it('answers 401 with a challenge without credentials or with wrong ones', async () => {
    for (const path of ['/admin', '/admin/queue/handlers', '/admin/api/queues', '/admin/static/favicon-32x32.png']) {
      const none = await app.request(path);
      expect(none.status, path).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="Switchyard admin"/);
      expect((await app.request(path, { headers: basic(admin.user, 'wrong') })).status, path).toBe(401);
      expect((await app.request(path, { headers: basic('root', admin.password) })).status, path).toBe(401);
      expect((await app.request(path, { headers: { Authorization: 'Bearer x' } })).status, path).toBe(401);
    }
  });

  it('serves the board, its API and its assets with the right credentials', async () => {
    const headers = basic(admin.user, admin.password);
    const page = await app.request('/admin', { headers });
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain('<title>Switchyard</title>');
    expect(html).toContain('<base href="/admin/" />');
    expect(html).not.toContain(admin.password);

    const asset = html.match(/src="(static\/js\/main\.[^"]+\.js)"/)?.[1];
    expect(asset).toBeDefined();
    const js = await app.request(`/admin/${asset}`, { headers });
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);

    const deep = await app.request('/admin/queue/handlers', { headers });
    expect(deep.status).toBe(200);
    const slash = await app.request('/admin/', { headers });
    expect(slash.status).toBe(302);
    expect(slash.headers.get('location')).toBe('/admin');

    const api = await app.request('/admin/api/queues?activeQueue=handlers&status=failed&page=1', { headers });
    expect(api.status).toBe(200);
    const text = await api.text();
    const names = (JSON.parse(text) as { queues: { name: string }[] }).queues.map((q) => q.name).sort();
    expect(names).toEqual([EVENTS_QUEUE, HANDLERS_QUEUE]);
    expect(text).not.toContain(admin.password);
    expect(text).not.toContain(testRedisUrl());
  });
});
