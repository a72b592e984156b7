/** Writes to the admin come from its own pages only: a form another site posts with the browser's login is refused. */
import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdmin } from '../../../src/admin/index.js';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const admin = { user: 'ops', password: 'pw-guard-5d1e' };
const auth = { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` };
/** bull-board's "add a job" takes a JSON body; a cross-site form can send one as text/plain. */
const ADD = 'http://switchyard.local/admin/api/queues/events/add';
const job = JSON.stringify({ name: 'forged', data: { from: 'elsewhere' }, options: {} });

describe('admin writes: same origin only', () => {
  const prefix = uniquePrefix('adminguard');
  let redis: Redis;
  let queues: Queue[];
  let app: Hono;

  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    queues = [new Queue(EVENTS_QUEUE, { connection: redis, prefix }), new Queue(HANDLERS_QUEUE, { connection: redis, prefix })];
    app = new Hono();
    expect(mountAdmin(app, { queues, admin, history: { redis, prefix } })).toBe(true);
  });
  afterAll(async () => {
    await Promise.allSettled(queues.map((q) => q.close()));
    await redis.quit();
  });

  const post = (headers: Record<string, string>) =>
    app.request(ADD, { method: 'POST', body: job, headers: { ...auth, 'Content-Type': 'text/plain', ...headers } });
  const waiting = () => queues[0]!.getJobCountByTypes('waiting');

  it('refuses a form posted from another site, with the login the browser adds, and adds nothing', async () => {
    const forged: Record<string, string>[] = [
      { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' },
      { Origin: 'https://evil.example' },
      { 'Sec-Fetch-Site': 'same-site', Origin: 'https://other.switchyard.local' },
      {},
    ];
    for (const headers of forged) {
      const res = await post(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(await res.text()).toMatch(/must be sent from one of its own pages/);
    }
    expect(await waiting()).toBe(0);
  });

  it('accepts the same write from its own page (Sec-Fetch-Site, or an Origin of this host behind a TLS proxy)', async () => {
    expect((await post({ 'Sec-Fetch-Site': 'same-origin', Origin: 'http://switchyard.local' })).status).toBe(200);
    expect((await post({ Origin: 'https://switchyard.local', Host: 'switchyard.local' })).status).toBe(200);
    expect(await waiting()).toBe(2);
  });

  it('still asks for the login first, and leaves reads alone', async () => {
    expect((await app.request(ADD, { method: 'POST', body: job, headers: { Origin: 'https://evil.example' } })).status).toBe(401);
    expect(
      (await app.request('http://switchyard.local/admin/deliveries', { headers: { ...auth, 'Sec-Fetch-Site': 'cross-site' } })).status,
    ).toBe(200);
  });
});
